public import AuthKernel
import Foundation
public import Hummingbird
import Logging
public import ServiceLifecycle

/// Email and password sign-in with verification by mailed code, and password resets by mailed code
/// or by approval from another signed-in device (contract §4 "password").
public struct PasswordProvider: AuthProvider {
    /// `password`: its name in `providers`, its configuration section, `auth_providers` and `amr`.
    public static let id = "password"
    /// Its sentences: English and German.
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
    /// How the notice of a newly added sign-in method names it, in English; the catalog's
    /// `password.method_name` words it in other languages.
    public static let methodName = "a password"
    static let verifyPurpose = "password_register"
    static let resetPurpose = "password_reset"
    static let approvalKind = "password_reset"

    let kernel: Kernel
    let settings: PasswordSettings
    let policy: PasswordPolicy
    let hasher: PasswordHasher
    /// Lock state for emails without an account (see ``DecoyAccounts``).
    let decoys: DecoyAccounts<PasswordCredential>
    /// What verifying each scheme held here costs: the least a refusal is held.
    let schemeCosts = HashSchemeCosts()

    /// Reads its configuration section and registers its mail and hooks with the kernel.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        settings = try PasswordSettings(&config)
        policy = PasswordPolicy(minLength: settings.minLength)
        hasher = try PasswordHasher(parameters: settings.argon2, threads: settings.maxConcurrentHashes)
        decoys = kernel.decoys(Self.id)
        kernel.approvals.setAuditPrefix("reset", for: Self.approvalKind)
        // An operator's "send a reset": the same mailed code as `reset/email/initiate`, refused
        // (429) while the last one is fresh.
        let codes = settings.codes
        kernel.resets.register("the password") { [kernel] user in
            guard let email = user.email, user.secret(Self.id, as: PasswordCredential.self) != nil else { return false }
            let code = try await kernel.codes.issue(purpose: Self.resetPurpose, key: email, policy: codes)
            try await kernel.mailer.send(template: PasswordMail.reset, to: email, code: code, lifetime: codes.ttl)
            await kernel.audit.record("reset_requested", provider: Self.id, user: user.id, account: email, reason: "sent by an operator")
            return true
        }
        if settings.loginRequiresEmailCode {
            kernel.signInHooks.register(EmailCodeFactor(kernel: kernel))
            kernel.signInHooks.register(EmailCodePolicy(hooks: kernel.signInHooks))
        }
    }

    /// Its background work, run beside the server.
    public var services: [any Service] { [HashSchemeCostService(provider: self), HasherShutdownService(hasher: hasher)] }

    // MARK: Bodies

    struct RegisterBody: Decodable {
        var email: String
        var password: String
        var displayName: String?
        enum CodingKeys: String, CodingKey { case email, password, displayName = "display_name" }
    }
    struct CodeBody: Decodable {
        var email: String
        var code: String
        /// The password chosen at registration: the code alone does not say whose registration it completes.
        var password: String
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case email, code, password, deviceName = "device_name", platform }
    }
    struct EmailBody: Decodable { var email: String }
    struct LoginBody: Decodable {
        var email: String
        var password: String
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case email, password, deviceName = "device_name", platform }
    }
    struct ChangeBody: Decodable {
        var currentPassword: String?
        var newPassword: String
        enum CodingKeys: String, CodingKey { case currentPassword = "current_password", newPassword = "new_password" }
    }
    struct ResetVerifyBody: Decodable {
        var email: String
        var code: String
        /// Absent: the two-step reset (contract §5), which answers a `reset_token` instead.
        var newPassword: String?
        enum CodingKeys: String, CodingKey { case email, code, newPassword = "new_password" }
    }
    struct ResetTokenAnswer: ResponseEncodable {
        var resetToken: String
        var expiresIn: Int
        enum CodingKeys: String, CodingKey { case resetToken = "reset_token", expiresIn = "expires_in" }
    }
    struct ResetCompleteBody: Decodable {
        var resetToken: String
        var newPassword: String
        var signIn: Bool?
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey {
            case resetToken = "reset_token", newPassword = "new_password", signIn = "sign_in", deviceName = "device_name", platform
        }
    }
    struct DeviceResetBody: Decodable {
        var email: String
        var newPassword: String
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case email, newPassword = "new_password", deviceName = "device_name", platform }
    }

    struct Registered: ResponseEncodable {
        var status = "verification_required"
        var email: String
    }
    struct Message: ResponseEncodable {
        var message: String
        var expiresIn: Int?
        enum CodingKeys: String, CodingKey { case message, expiresIn = "expires_in" }
    }
    struct DeviceReset: ResponseEncodable {
        var requestID: String
        var expiresAt: String
        var matchCode: String
        enum CodingKeys: String, CodingKey { case requestID = "request_id", expiresAt = "expires_at", matchCode = "match_code" }
    }
    struct DeviceResetStatus: ResponseEncodable {
        var status: String
        var expiresAt: String
        enum CodingKeys: String, CodingKey { case status, expiresAt = "expires_at" }
    }

    // MARK: Routes

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        // Always there (a challenge that offers no emailed code answers 409), so the API does not change shape with the setting.
        routes.post("mfa/email-code") { request, context in try await mailSecondFactorCode(request, context) }
        routes.post("password/register") { request, context in try await register(request, context) }
        routes.post("password/verify-email") { request, context in try await verifyEmail(request, context) }
        routes.post("password/resend-verification") { request, context in try await resendVerification(request, context) }
        routes.post("password/login") { request, context in try await login(request, context) }
        routes.post("password/change") { request, context in try await change(request, context) }
        routes.post("password/reset/email/initiate") { request, context in try await initiateEmailReset(request, context) }
        routes.post("password/reset/email/verify") { request, context in try await verifyEmailReset(request, context) }
        routes.post("password/reset/complete") { request, context in try await completeReset(request, context) }
        routes.post("password/reset/device/initiate") { request, context in try await initiateDeviceReset(request, context) }
        routes.get("password/reset/device/{request_id}") { _, context in try await deviceResetStatus(context) }
        routes.post("password/reset/device/{request_id}/complete") { _, context in try await completeDeviceReset(context) }
        return routes
    }

    func email(_ raw: String) throws(AuthError) -> String {
        guard let email = EmailAddress(raw) else { throw AuthError.invalidEmail }
        return email.value
    }

    // MARK: Registration

    /// A registration waiting for its code, as kept in the code's payload: the password's hash (the
    /// plain text is never stored), the display name and the user to link to, as its client chose.
    struct PendingRegistration: Sendable, Equatable {
        var passwordHash: String
        var displayName: String?
        var linkUserID: UUID?
        var createdAt: Double
        /// Which client made it (a hash of its network), so that one client's registrations push
        /// out only its own when the list is full.
        var client: String?
        /// A registration made on the sign-in page: a hash of the secret its browser keeps in its
        /// sealed sign-in cookie, which completes it in place of the password.
        var browser: String?

        var json: JSONValue {
            var o: [String: JSONValue] = ["password_hash": .string(passwordHash), "created_at": .number(createdAt)]
            if let displayName { o["display_name"] = .string(displayName) }
            if let linkUserID { o["link_user_id"] = .string(linkUserID.lowercased) }
            if let client { o["client"] = .string(client) }
            if let browser { o["browser"] = .string(browser) }
            return .object(o)
        }

        init(passwordHash: String, displayName: String?, linkUserID: UUID?, createdAt: Double, client: String?, browser: String? = nil) {
            self.passwordHash = passwordHash
            self.displayName = displayName
            self.linkUserID = linkUserID
            self.createdAt = createdAt
            self.client = client
            self.browser = browser
        }

        init?(_ value: JSONValue) {
            guard case .object(let o) = value, case .string(let hash) = o["password_hash"] else { return nil }
            passwordHash = hash
            if case .string(let name) = o["display_name"] { displayName = name }
            if case .string(let id) = o["link_user_id"] { linkUserID = UUID(uuidString: id) }
            if case .number(let t) = o["created_at"] { createdAt = t } else { createdAt = 0 }
            if case .string(let c) = o["client"] { client = c }
            if case .string(let b) = o["browser"] { browser = b }
        }

        /// The registrations in a code's payload, oldest first (a payload from before several were
        /// kept holds one, at its top level).
        static func all(in payload: [String: JSONValue]?) -> [PendingRegistration] {
            guard let payload else { return [] }
            if case .array(let list) = payload["registrations"] { return list.compactMap(PendingRegistration.init) }
            return PendingRegistration(.object(payload)).map { [$0] } ?? []
        }

        /// `list` with `new` added, as a payload: a registration never replaces another one's
        /// password, name or link target. Registrations older than `ttl` go; when the list is still
        /// full, the oldest of the same client's goes, else the oldest: one client cannot push out
        /// the registrations of others.
        static func payload(_ list: [PendingRegistration], adding new: PendingRegistration, ttl: Int) -> [String: JSONValue] {
            var kept = list.filter { $0.createdAt > new.createdAt - Double(ttl) }
            if kept.count >= PasswordSettings.maxPendingRegistrations {
                kept.remove(at: kept.firstIndex { $0.client != nil && $0.client == new.client } ?? 0)
            }
            return ["registrations": .array((kept + [new]).suffix(PasswordSettings.maxPendingRegistrations).map(\.json))]
        }
    }

    func register(_ request: Request, _ context: AuthRequestContext) async throws -> EditedResponse<Registered> {
        let body = try await request.decodeJSON(as: RegisterBody.self, context: context)
        let email = try await startRegistration(
            email: body.email, password: body.password, displayName: body.displayName, principal: context.principal, browser: nil, context)
        return EditedResponse(status: .accepted, response: Registered(email: email))
    }

    /// Registration's first step, for the API and the sign-in page: checks, then mails the code.
    /// - Parameter browser: on the page, the hash of the secret its sealed cookie keeps (it completes
    ///   the registration in place of the password).
    /// - Returns: the normalised address.
    func startRegistration(
        email rawEmail: String, password rawPassword: String, displayName rawName: String?, principal: Principal?, browser: String?,
        _ context: AuthRequestContext
    ) async throws -> String {
        let email = try email(rawEmail)
        let password = try policy.check(rawPassword, email: email)
        let displayName = try DisplayName.validate(rawName)
        try await kernel.rateLimiter.consume(settings.registerPerIP, key: "password.register.ip:\(context.clientKey)")
        let linkUserID = principal?.user.id
        // Linking adds a way in: a stolen token must not be enough (contract 5).
        if let principal { try kernel.sessions.requireFresh(principal) }
        if let owner = try await kernel.users.user(email: email) {
            guard let linkUserID else { throw AuthError.accountExists }
            guard owner.id == linkUserID else { throw AuthError.identityInUse }
        }
        // A password already on the account is changed with the current one, never replaced by a link.
        if let principal, principal.user.secret(Self.id, as: PasswordCredential.self) != nil { throw Self.hasPassword }
        let hash = try await hasher.hash(password)
        // A closed sign-up answers as an open one (contract §17): the same checks, hash, write and
        // answer, and one mail that tells the unknown address it has no account instead of a code.
        let refused = try await kernel.signup.refusesSignUp(email: email, linkingTo: principal)
        // Under a closed sign-up an account needs its address proven first, whatever
        // require_email_verification says: the mode lets in verified addresses only.
        if settings.requireEmailVerification || kernel.signup.mode != .open {
            // Nothing is created before the inbox answers: the registration waits in the code's
            // payload beside any earlier one for this email, each keeping the password its client
            // chose. The mailbox's owner completes only the registration whose password they give,
            // so neither a registration made before theirs (pre-hijacking) nor one made after it
            // (rewriting theirs) can take the account.
            let new = PendingRegistration(
                passwordHash: hash, displayName: displayName, linkUserID: linkUserID, createdAt: kernel.clock.now().timeIntervalSince1970,
                client: Hex.encode(SHA256.hash(context.clientKey).prefix(8)), browser: browser
            )
            let ttl = settings.codes.ttl
            let code = try await kernel.codes.issue(purpose: Self.verifyPurpose, key: email, policy: settings.codes) { earlier in
                PendingRegistration.payload(PendingRegistration.all(in: earlier), adding: new, ttl: ttl)
            }
            if refused { try await kernel.signup.mailNoAccount(to: email) } else { try await mailVerification(to: email, code: code) }
        } else {
            let user = try await kernel.users.signIn(
                .init(identity: Identity(provider: Self.id, subject: email), email: email, emailVerified: false), linkingTo: principal
            )
            try await setPassword(hash: hash, for: user.id, email: email, displayName: displayName)
            let code = try await kernel.codes.issue(purpose: Self.verifyPurpose, key: email, policy: settings.codes, payload: [:])
            try await mailVerification(to: email, code: code)
        }
        // The mail just sent starts the resend interval (a resend inside it answers 429).
        if settings.codes.resendInterval > 0 { _ = try? await kernel.rateLimiter.consume(resendRule, key: resendKey(email)) }
        kernel.logger.info("password registration started", metadata: ["request.ip": "\(context.clientIP)"])
        return email
    }

    func verifyEmail(_ request: Request, _ context: AuthRequestContext) async throws -> SignInResponse {
        let body = try await request.decodeJSON(as: CodeBody.self, context: context)
        let email = try email(body.email)
        let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
        try await kernel.rateLimiter.consume([
            RateLimitCharge(settings.verifiesPerIP, key: "password.verify.ip:\(context.clientKey)"),
            RateLimitCharge(settings.attemptsPerClient, key: "password.verify.client:\(context.clientKey):\(email)"),
        ])
        do {
            let user = try await completeRegistration(code: body.code, proof: .password(body.password), email: email, principal: context.principal)
            // The code just mailed to the address proved it: no second one.
            return try await Self.$addressProven.withValue(true) { try await kernel.sessions.signIn(user, amr: [Self.id], device: device) }
        } catch let error as AuthError {
            await kernel.audit.record("sign_in_failed", provider: Self.id, account: email, device: device.name, reason: error.code)
            throw error
        }
    }

    /// What says which pending registration a right code completes.
    enum RegistrationProof {
        /// The password its client chose (the API).
        case password(String)
        /// The secret the sign-in page's sealed cookie keeps (its hash is in the registration).
        case browser(String)
    }

    /// The code proves the inbox; the password says which registration it completes (or, when
    /// accounts exist before verification, that the account is the caller's).
    func completeRegistration(code: String, proof: RegistrationProof, email: String, principal: Principal?) async throws -> UserRecord {
        let checked = try await kernel.codes.check(purpose: Self.verifyPurpose, key: email, code: code, policy: settings.codes)
        let pending = PendingRegistration.all(in: checked.payload)
        var chosen: PendingRegistration?
        var account: UserRecord?
        if case .browser(let secret) = proof {
            // The page's registration: the one its cookie's secret names, compared in constant time.
            let hash = Array(Hex.encode(SHA256.hash(secret)).utf8)
            chosen = pending.last { $0.browser.map { ConstantTime.equals(Array($0.utf8), hash) } ?? false }
            guard chosen != nil else { try await reject(checked) }
            return try await finishRegistration(checked, chosen: chosen, email: email, principal: principal)
        }
        guard case .password(let presented) = proof else { try await reject(checked) }
        // Too long to be any registration's password: a wrong try, checked before any hashing.
        guard presented.utf8.count <= Self.maxPresentedPasswordBytes else { try await reject(checked) }
        let password = PasswordPolicy.normalize(presented)
        if pending.isEmpty {
            // The account was created at registration (require_email_verification false).
            account = try await kernel.users.user(email: email)
            let credential = account?.secret(Self.id, as: PasswordCredential.self)
            // With no password to check, the dummy's work: the time says nothing.
            let ok = if let credential { try await matches(presented, credential) } else { try await hasher.verify(password, hash: nil) }
            guard ok else { try await reject(checked) }
        } else {
            // Newest first: a client that registered twice with the same password gets its latest name.
            for registration in pending.reversed() where try await hasher.verify(password, hash: registration.passwordHash) {
                chosen = registration
                break
            }
            guard chosen != nil else { try await reject(checked) }
        }
        _ = account
        return try await finishRegistration(checked, chosen: chosen, email: email, principal: principal)
    }

    private func finishRegistration(
        _ checked: OneTimeCodeService.Checked, chosen: PendingRegistration?, email: String, principal: Principal?
    ) async throws -> UserRecord {
        // A Bearer sent to `register` links only when the same user's Bearer comes back here.
        if let target = chosen?.linkUserID, target != principal?.user.id { try await reject(checked) }
        // Checked before the code is used up: a refused link leaves the code for another try.
        if let principal {
            try kernel.sessions.requireFresh(principal)
            if chosen != nil, principal.user.secret(Self.id, as: PasswordCredential.self) != nil { throw Self.hasPassword }
        }
        try await kernel.codes.consume(checked)
        var user = try await kernel.users.signIn(
            .init(identity: Identity(provider: Self.id, subject: email), email: email, emailVerified: true), linkingTo: principal
        )
        if let chosen {
            user = try await setPassword(hash: chosen.passwordHash, for: user.id, email: email, displayName: chosen.displayName)
        }
        return user
    }

    /// Counts a right code with the wrong password (or Bearer) as a wrong try, and answers as for a wrong code.
    private func reject(_ checked: OneTimeCodeService.Checked) async throws -> Never {
        let remaining = try await kernel.codes.reject(checked, policy: settings.codes)
        throw AuthError.invalidCode(attemptsRemaining: remaining)
    }

    func resendVerification(_ request: Request, _ context: AuthRequestContext) async throws -> Message {
        let body = try await request.decodeJSON(as: EmailBody.self, context: context)
        let email = try email(body.email)
        try await kernel.rateLimiter.consume(settings.resendsPerIP, key: "password.resend.ip:\(context.clientKey)")
        // The same limit whether or not anything is pending, so the answer reveals nothing; a
        // registration's own mail started the interval too, so a resend inside it says so (429)
        // instead of pretending (contract §12).
        if settings.codes.resendInterval > 0 {
            try await kernel.rateLimiter.consume(resendRule, key: resendKey(email), message: "A code was sent a moment ago. Wait before asking for another.")
        }
        // Answered before anything that depends on a registration being pending: waiting for the
        // mail only when one is made the answer's timing say so.
        resendVerificationLater(email)
        return Message(message: "Verification code resent", expiresIn: settings.codes.ttl)
    }

    /// One verification mail per address per `password.resend_interval` (0: no interval), registration's included.
    var resendRule: RateLimitRule { RateLimitRule(limit: 1, window: max(1, settings.codes.resendInterval)) }
    func resendKey(_ email: String) -> String { "password.resend:\(email)" }

    /// ``resendVerificationIfPending(_:)`` after the answer.
    func resendVerificationLater(_ email: String) {
        let provider = self
        Task { await provider.resendVerificationIfPending(email) }
    }

    /// Sends a new verification code when a registration is pending (or an account is unverified); silent otherwise.
    func resendVerificationIfPending(_ email: String) async {
        let pending = try? await kernel.codes.pendingPayload(purpose: Self.verifyPurpose, key: email)
        let unverified = (try? await kernel.users.user(email: email)).map { !$0.emailVerified && $0.secret(Self.id, as: PasswordCredential.self) != nil } ?? false
        guard pending != nil || unverified else { return }
        do {
            // The pending registrations stay as they are in the store (nil keeps them, in the same
            // write): a registration made meanwhile is not lost.
            let code = try await kernel.codes.issue(purpose: Self.verifyPurpose, key: email, policy: settings.codes, payload: pending == nil ? [:] : nil)
            // A registration a closed sign-up refused is pending too: it is told again there is no account.
            if !unverified, try await kernel.signup.refusesSignUp(email: email, linkingTo: nil) {
                try await kernel.signup.mailNoAccount(to: email)
            } else {
                try await mailVerification(to: email, code: code)
            }
        } catch let error as AuthError where error.status == .tooManyRequests {
            // Within the resend interval: the earlier code is still on its way.
        } catch {
            kernel.logger.error("could not resend a verification code", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Login

    func login(_ request: Request, _ context: AuthRequestContext) async throws -> SignInResponse {
        let arrived = kernel.clock.now()
        let body = try await request.decodeJSON(as: LoginBody.self, context: context)
        let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
        let user = try await verifiedUser(email: body.email, password: body.password, device: device, arrived: arrived, context)
        // The user as read before the check: a reset that ended every session meanwhile refuses this one.
        return try await kernel.sessions.signIn(user, amr: [Self.id], device: device)
    }

    /// The user whose email and password these are, under the same limits, lockouts and decoys as
    /// `login`, without starting a session: for the sign-in page, where the server starts it.
    /// Failures are audited, and answered no sooner than the refusal floor after `arrived` (see
    /// ``holdRefusal(since:)``).
    /// - Parameter arrived: when the request arrived; now when not given.
    /// - Throws: 400 `INVALID_EMAIL`, 401 `INVALID_CREDENTIALS`, 403 `EMAIL_NOT_VERIFIED`, 429.
    func verifiedUser(
        email rawEmail: String, password: String, device: DeviceInfo = .none, arrived: Date? = nil, _ context: AuthRequestContext
    ) async throws -> UserRecord {
        let arrived = arrived ?? kernel.clock.now()
        let email = try email(rawEmail)
        // Refused by a rate limit before anything is checked: not a sign-in attempt worth an audit line
        // (an audit line is an fsync, and a flood of them would rotate real events out).
        try await kernel.rateLimiter.consume([
            RateLimitCharge(settings.loginPerIP, key: "password.login.ip:\(context.clientKey)"),
            RateLimitCharge(settings.loginPerEmail, key: "password.login.email:\(email)"),
        ])
        do {
            return try await checkPassword(password, email: email, context)
        } catch let error as AuthError {
            await kernel.audit.record("sign_in_failed", provider: Self.id, account: email, device: device.name, reason: error.code)
            await holdRefusal(since: arrived)
            throw error
        }
    }

    /// Waits until ``refusalFloor`` after `arrived` on the kernel's clock (contract §12, §17): the
    /// larger of `password.refusal_floor_ms` and what the costliest scheme held here takes to verify
    /// (measured, see ``HashSchemeCosts``). An unknown email (which hashes nothing), a wrong native
    /// password (Argon2id) and a wrong imported one (PBKDF2, bcrypt) are then answered at the same
    /// time: waited out, never computed. A right password is not held: it was never a refusal. The
    /// rate limits' 429s, which depend on no account, are not held either.
    func holdRefusal(since arrived: Date) async {
        let floor = refusalFloor
        guard floor > 0 else { return }
        // Cancelled (the client went away): answer now, the refusal stays a refusal.
        try? await kernel.clock.sleep(until: arrived.addingTimeInterval(floor))
    }

    private func checkPassword(_ presented: String, email: String, _ context: AuthRequestContext) async throws -> UserRecord {
        // No stored password is longer than 128 code points: a huge one is refused before NFKC and Argon2 see it.
        guard presented.utf8.count <= Self.maxPresentedPasswordBytes else { throw AuthError.invalidCredentials }
        let password = PasswordPolicy.normalize(presented)
        let user = try await kernel.users.user(email: email)
        let credential = user?.secret(Self.id, as: PasswordCredential.self)
        let now = kernel.clock.now()

        guard let user, let credential else {
            // Unknown account, or one without a password: maybe a registration waiting for its code,
            // whose hash alone is checked. Nothing is hashed for an unknown email (contract §17): the
            // refusal floor, at least the costliest scheme's time, is waited out instead, and no
            // hashing thread is spent on addresses anyone can make up.
            let pending = PendingRegistration.all(in: try await kernel.codes.pendingPayload(purpose: Self.verifyPurpose, key: email)).last
            let settings = self.settings
            let fresh: @Sendable () -> PasswordCredential = { PasswordCredential(hash: "", now: now) }
            if let remaining = try await decoys.withRecord(email, now: now, make: fresh, { $0.lockRemaining(now: now) }) { throw Self.locked(remaining) }
            if let pending, try await hasher.verify(password, hash: pending.passwordHash) {
                resendVerificationLater(email)
                throw AuthError.emailNotVerified
            }
            // The same lock, work and counter as a real account, on a decoy: neither the answers nor
            // their timing say the account does not exist.
            kernel.logger.info("password sign-in failed", metadata: ["request.ip": "\(context.clientIP)"])
            if let lock = try await decoys.withRecord(email, now: now, make: fresh, { $0.recordFailure(now: now, settings: settings) }) {
                await kernel.audit.record("lockout", provider: Self.id, account: email)
                throw Self.locked(lock)
            }
            throw AuthError.invalidCredentials
        }
        if let remaining = credential.lockRemaining(now: now) { throw Self.locked(remaining) }
        // An imported hash was made from the password as typed (the other system did not normalise
        // it); the Argon2id that replaces it below hashes the normalised one, as every authd hash.
        let ok = try await matches(presented, credential)
        guard ok else {
            kernel.logger.info("password sign-in failed", metadata: ["user.id": "\(user.id.lowercased)", "request.ip": "\(context.clientIP)"])
            if credential.failures + 1 >= settings.lockoutAfter, let lock = try await recordFailure(user.id, now: now) {
                kernel.logger.warning("password sign-in locked after repeated failures", metadata: ["user.id": "\(user.id.lowercased)"])
                await kernel.audit.record("lockout", provider: Self.id, user: user.id, account: email)
                throw Self.locked(lock)
            }
            // Counted after answering: a wrong password must take no longer than an unknown email,
            // and a journal fsync would tell them apart.
            let provider = self
            Task { _ = try? await provider.recordFailure(user.id, now: now) }
            throw AuthError.invalidCredentials
        }
        if credential.failures > 0 {
            _ = try await kernel.users.change(user.id) { user in
                guard var current = user.secret(Self.id, as: PasswordCredential.self) else { return }
                current.failures = 0
                current.lockedUntil = nil
                try user.setSecret(Self.id, current)
            }
        }
        if settings.requireEmailVerification, !user.emailVerified {
            resendVerificationLater(email)
            throw AuthError.emailNotVerified
        }
        if credential.importedHash != nil || hasher.needsRehash(credential.hash) {
            let newHash = try await hasher.hash(password)
            _ = try await kernel.users.update(user.id) { user in
                guard var current = user.secret(Self.id, as: PasswordCredential.self), current.hash == credential.hash else { return }
                current.hash = newHash
                try user.setSecret(Self.id, current)
            }
            kernel.logger.info("password re-hashed with the current parameters", metadata: ["user.id": "\(user.id.lowercased)"])
        }
        return user
    }

    /// The `secrets["password"]` of a user brought over with `authd import-users`: the other
    /// system's hash, checked at the first sign-in and then replaced by Argon2id.
    package static func importedCredential(hash: String, changedAt seconds: Double) throws -> JSONValue {
        let credential = PasswordCredential(hash: PasswordCredential.importedPrefix + hash, now: Date(timeIntervalSince1970: seconds))
        return try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(credential))
    }

    /// Whether `presented` (as typed) is the credential's password. An imported hash was made from
    /// the password as typed (the other system did not normalise it); authd's own from its NFKC form.
    func matches(_ presented: String, _ credential: PasswordCredential) async throws -> Bool {
        if let imported = credential.importedHash { return try await hasher.verifyImported(presented, hash: imported) }
        return try await hasher.verify(PasswordPolicy.normalize(presented), hash: credential.hash)
    }

    /// Counts a wrong password for the user; returns the lock length when this failure starts a lock.
    func recordFailure(_ userID: UUID, now: Date) async throws -> Int? {
        let settings = self.settings
        return try await kernel.users.change(userID) { user -> Int? in
            guard var current = user.secret(Self.id, as: PasswordCredential.self) else { return nil }
            let lock = current.recordFailure(now: now, settings: settings)
            try user.setSecret(Self.id, current)
            return lock
        }
    }

    /// 409 `INVALID_STATE`: linking a password to an account that has one.
    static let hasPassword = AuthError.invalidState("This account already has a password: change it with /password/change.")

    /// Longest password checked at login, in bytes (128 code points of 4 bytes, with room to spare).
    static let maxPresentedPasswordBytes = 1024

    static func locked(_ seconds: Int) -> AuthError {
        .rateLimited(retryAfter: seconds, message: "Password sign-in is locked for a while after too many wrong passwords.").worded("password.error.locked")
    }

    // MARK: Change

    func change(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let body = try await request.decodeJSON(as: ChangeBody.self, context: context)
        try await changePassword(of: principal, current: body.currentPassword, new: body.newPassword)
        return Response(status: .noContent)
    }

    /// Sets or changes the signed-in user's password (the current one checked and counted, or a
    /// fresh session for a first one); every other session ends and the owner is told.
    func changePassword(of principal: Principal, current: String?, new newPassword: String) async throws {
        let user = principal.user
        guard let email = user.email else {
            throw AuthError.invalidState("Add an email address to the account before setting a password.").worded("password.error.no_email")
        }
        let checked = try policy.check(newPassword, email: email)
        let now = kernel.clock.now()
        let existing = user.secret(Self.id, as: PasswordCredential.self)
        // Adding a first password checks nothing, so it needs a fresh session, as any new credential.
        if existing == nil { try kernel.sessions.requireFresh(principal) }
        if let credential = existing {
            guard let current else {
                throw AuthError.invalidRequest("The field `current_password` is required.", field: "current_password").worded("password.error.current_password_required")
            }
            guard current.utf8.count <= Self.maxPresentedPasswordBytes else { throw AuthError.invalidCredentials }
            if let remaining = credential.lockRemaining(now: now) { throw Self.locked(remaining) }
            guard try await matches(current, credential) else {
                if let lock = try await recordFailure(user.id, now: now) {
                    await kernel.audit.record("lockout", provider: Self.id, user: user.id)
                    throw Self.locked(lock)
                }
                throw AuthError.invalidCredentials
            }
        }
        let hash = try await hasher.hash(checked)
        try await setPassword(hash: hash, for: user.id, email: email, displayName: nil)
        try await kernel.sessions.revokeAll(of: user.id, except: principal.session.id)
        await notifyChanged(email: email, how: "change", device: principal.session.deviceName, removed: [])
        kernel.logger.info("password changed; other sessions ended", metadata: ["user.id": "\(user.id.lowercased)"])
        await kernel.audit.record("password_changed", provider: Self.id, user: user.id, device: principal.session.deviceName)
        await kernel.events.credentialChanged(user.id, credential: Self.id)
    }

    /// Stores a new password hash, links the `password` identity, and sets the display name if none.
    @discardableResult
    func setPassword(hash: String, for userID: UUID, email: String, displayName: String?) async throws -> UserRecord {
        let now = kernel.clock.now()
        return try await kernel.users.update(userID) { user in
            try user.setSecret(Self.id, PasswordCredential(hash: hash, now: now))
            let identity = Identity(provider: Self.id, subject: email)
            if !user.identities.contains(identity) { user.identities.append(identity) }
            if user.displayName == nil, let displayName { user.displayName = displayName }
        }
    }

    func mailVerification(to email: String, code: String) async throws {
        try await kernel.mailer.send(
            template: PasswordMail.verification, to: email, code: code, lifetime: settings.codes.ttl
        )
    }

    /// Mails the owner that the password changed, in their language: `how` names the way
    /// (`change`, `email_reset`, `device_reset`: the catalog's `password.password_changed.how.*`),
    /// `removed` what a reset took away (catalog keys, such as a recovery hook's `pin.recovery.removed`,
    /// or phrases as they are).
    func notifyChanged(email: String, how: String, device: String?, removed: [String], passkeys: [String] = []) async {
        // The mail's fragments are in the language the mail is written in: the owner's, not the asker's.
        let owner = try? await kernel.users.user(email: email)
        let language = owner?.locale.flatMap { kernel.messages.available($0) } ?? kernel.messages.available(Messages.language) ?? "en"
        func text(_ key: String, _ values: [String: String] = [:]) -> String { kernel.messages.text(key, values, language: language) }
        var removedText = removed.isEmpty ? "" : " " + text("password.password_changed.removed", ["removed": removed.map { text($0) }.joined(separator: ", ")])
        // A reset does not remove passkeys (contract §10): the owner hears which still sign in.
        if !passkeys.isEmpty {
            let names = passkeys.map { text("password.password_changed.passkey_name", ["name": LogSafe.text($0, maxLength: 64)]) }.joined(separator: ", ")
            removedText += " " + text("password.password_changed.passkeys", ["passkeys": names])
        }
        do {
            try await kernel.mailer.send(
                template: PasswordMail.changed, to: email,
                values: [
                    "when": kernel.messages.mailTime(kernel.clock.now(), language: language), "how": text("password.password_changed.how." + how),
                    "device": device.map { " " + text("password.password_changed.device", ["device": $0]) } ?? "", "removed": removedText,
                ],
                language: language
            )
        } catch {
            kernel.logger.error("could not mail the password-changed notice", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Reset by email code

    /// Takes one reset of `kind` (`email` or `device`) from the budgets of this client for this
    /// email and of this email from everyone: a stranger who spends their own budget leaves the
    /// owner's, and device resets (which mail nothing) never use up email resets.
    func consumeResetBudget(kind: String, email: String, _ context: AuthRequestContext) async throws {
        try await kernel.rateLimiter.consume([
            RateLimitCharge(settings.resetsPerIP, key: "password.reset.ip:\(context.clientKey)"),
            RateLimitCharge(settings.resetsPerEmailAndIP, key: "password.reset.\(kind).client:\(context.clientKey):\(email)"),
        ])
        // A client's first request for an email in the window always counts as its own, so the
        // owner's first ask gets through however many networks a stranger spends the ceiling
        // from (mail stays bounded by the codes' resend interval); further asks meet the ceiling.
        let first = RateLimitRule(limit: 1, window: settings.resetsPerEmail.window)
        guard try await kernel.rateLimiter.attempt(first, key: "password.reset.\(kind).first:\(context.clientKey):\(email)") != nil else { return }
        try await kernel.rateLimiter.consume(settings.resetsPerEmail, key: "password.reset.\(kind).email:\(email)")
    }

    func initiateEmailReset(_ request: Request, _ context: AuthRequestContext) async throws -> Message {
        let body = try await request.decodeJSON(as: EmailBody.self, context: context)
        try await startEmailReset(try email(body.email), context)
        return Message(message: "If an account exists for this email, a reset code has been sent.", expiresIn: settings.codes.ttl)
    }

    /// Takes the reset budget, then mails the code off the request's path.
    func startEmailReset(_ email: String, _ context: AuthRequestContext) async throws {
        try await consumeResetBudget(kind: "email", email: email, context)
        // Answer before doing anything that depends on the account, so neither the answer nor its
        // timing says whether the account exists.
        let provider = self
        Task {
            await provider.kernel.audit.record("reset_requested", provider: Self.id, account: email, reason: "email")
            await provider.sendResetCode(to: email)
        }
    }

    func sendResetCode(to email: String) async {
        do {
            // A code is issued for an unknown email too (and mailed to no one), so that a wrong code
            // afterwards costs the same whether or not the account exists.
            let code = try await kernel.codes.issue(purpose: Self.resetPurpose, key: email, policy: settings.codes)
            guard try await kernel.users.user(email: email) != nil else { return }
            try await kernel.mailer.send(
                template: PasswordMail.reset, to: email, code: code, lifetime: settings.codes.ttl
            )
        } catch let error as AuthError where error.status == .tooManyRequests {
            // The previous code is still fresh.
        } catch {
            kernel.logger.error("could not send a password reset code", metadata: ["error": "\(error)"])
        }
    }

    func verifyEmailReset(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(as: ResetVerifyBody.self, context: context)
        let email = try email(body.email)
        let password = try body.newPassword.map { try policy.check($0, email: email) }
        let user = try await checkResetCode(body.code, email: email, context)
        guard let password else {
            // Two steps: the code is spent for a token that sets the password later (a TOTP-app style
            // client asks for the new password on its own screen).
            let token = try await ResetToken.issue(for: user.id, email: email, tokens: kernel.tokens)
            var response = try ResetTokenAnswer(resetToken: token, expiresIn: ResetToken.ttl).response(from: request, context: context)
            response.headers[.cacheControl] = "no-store"
            return response
        }
        try await finishReset(user, email: email, password: password, how: "email_reset")
        return try Message(message: "Password changed", expiresIn: nil).response(from: request, context: context)
    }

    /// Spends a right reset code (counted and limited as the API's); the account it resets.
    func checkResetCode(_ code: String, email: String, _ context: AuthRequestContext) async throws -> UserRecord {
        try await kernel.rateLimiter.consume([
            RateLimitCharge(settings.verifiesPerIP, key: "password.verify.ip:\(context.clientKey)"),
            RateLimitCharge(settings.attemptsPerClient, key: "password.reset.verify.client:\(context.clientKey):\(email)"),
        ])
        try await kernel.codes.verify(purpose: Self.resetPurpose, key: email, code: code, policy: settings.codes)
        guard let user = try await kernel.users.user(email: email) else { throw AuthError.invalidCode(attemptsRemaining: 0) }
        return user
    }

    /// The second step of the two-step reset: the token from `reset/email/verify` and the new password;
    /// with `sign_in`, a session (or the second-factor challenge) instead of a message.
    func completeReset(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(as: ResetCompleteBody.self, context: context)
        let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
        try await kernel.rateLimiter.consume(settings.verifiesPerIP, key: "password.verify.ip:\(context.clientKey)")
        // The token's payload names the account, whose email the password must not be; only then is the token spent.
        guard let pending = try await ResetToken.pending(body.resetToken, tokens: kernel.tokens) else { throw ResetToken.invalid }
        let password = try policy.check(body.newPassword, email: pending.email)
        let userID = try await ResetToken.redeem(body.resetToken, tokens: kernel.tokens)
        guard let user = try await kernel.users.user(id: userID), user.email == pending.email else { throw ResetToken.invalid }
        try await finishReset(user, email: pending.email, password: password, how: "email_reset")
        guard body.signIn == true, let current = try await kernel.users.user(id: userID) else {
            return try Message(message: "Password changed", expiresIn: nil).response(from: request, context: context)
        }
        return try await Self.$addressProven.withValue(true) { try await kernel.sessions.signIn(current, amr: [Self.id], device: device) }
            .response(from: request, context: context)
    }

    /// Sets the password the owner chose after proving the inbox, ends every session, tells the owner.
    func finishReset(_ user: UserRecord, email: String, password: String, how: String) async throws {
        let hash = try await hasher.hash(password)
        // The code proved the inbox.
        let (removed, passkeys) = try await recover(user.id, hash: hash, email: email, provesInbox: true)
        await notifyChanged(email: email, how: how, device: nil, removed: removed, passkeys: passkeys)
        kernel.logger.info("password reset by email code; every session ended", metadata: ["user.id": "\(user.id.lowercased)"])
        await kernel.audit.record("reset_completed", provider: Self.id, user: user.id, reason: "email")
        await kernel.events.credentialChanged(user.id, credential: Self.id)
    }

    /// The owner takes the account back: the new password, in one write with whatever the kernel's
    /// recovery hooks remove (a PIN planted with a stolen session); then every session ends.
    /// - Returns: what the hooks removed, for the confirmation mail.
    func recover(_ userID: UUID, hash: String, email: String, provesInbox: Bool) async throws -> (removed: [String], passkeys: [String]) {
        let now = kernel.clock.now()
        let hooks = kernel.users.recovery
        let signInHooks = kernel.signInHooks
        let outcome = try await kernel.users.change(userID) { user -> (removed: [String], passkeys: [String]) in
            var removed: [String] = []
            if provesInbox, !user.emailVerified {
                // The inbox's owner takes over an account someone made on their address without
                // proving it: whatever that person attached to it (an Apple ID, another email, a
                // user name, a second factor or a passkey) goes, so it cannot bring them back in
                // or keep the owner out.
                let before = user
                signInHooks.removeSecondFactors(from: &user)
                let others = user.identities.filter { $0.subject != email }
                for identity in others where identity.provider != Self.id { user.secrets[identity.provider] = nil }
                user.identities.removeAll { $0.subject != email }
                user.username = nil
                if !others.isEmpty || user.secrets != before.secrets { removed.append("password.password_changed.other_methods") }
            }
            try user.setSecret(Self.id, PasswordCredential(hash: hash, now: now))
            let identity = Identity(provider: Self.id, subject: email)
            if !user.identities.contains(identity) { user.identities.append(identity) }
            if provesInbox { user.emailVerified = true }
            let all = removed + hooks.apply(to: &user)
            return (all, signInHooks.enrollments(for: user).filter { $0.type == "passkey" }.map { $0.name ?? "Passkey" })
        }
        try await kernel.sessions.revokeAll(of: userID)
        return outcome
    }

    // MARK: Reset approved by another device

    func initiateDeviceReset(_ request: Request, _ context: AuthRequestContext) async throws -> EditedResponse<DeviceReset> {
        let body = try await request.decodeJSON(as: DeviceResetBody.self, context: context)
        let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
        let started = try await startDeviceReset(email: try email(body.email), newPassword: body.newPassword, device: device, context)
        return EditedResponse(status: .accepted, response: started)
    }

    /// Asks the account's signed-in devices to approve a new password (number matching).
    func startDeviceReset(email: String, newPassword: String, device: DeviceInfo, _ context: AuthRequestContext) async throws -> DeviceReset {
        let password = try policy.check(newPassword, email: email)
        try await consumeResetBudget(kind: "device", email: email, context)
        // Hashed now, known account or not: the plain text is never stored and the timing is the same.
        let hash = try await hasher.hash(password)
        var target: UUID?
        if let user = try await kernel.users.user(email: email),
            try await kernel.approvals.pending(userID: user.id, kind: Self.approvalKind).count < settings.maxPendingResets
        {
            target = user.id
        }
        let (approval, matchCode) = try await kernel.approvals.create(
            kind: Self.approvalKind, userID: target, ttl: settings.approvalTTL, deviceName: device.name,
            payload: ["password_hash": .string(hash)], platform: device.platform, network: context.clientNetwork
        )
        await kernel.audit.record("reset_requested", provider: Self.id, account: email, device: device.name, reason: "device")
        return DeviceReset(requestID: approval.id, expiresAt: Timestamp.string(approval.expiresAt), matchCode: matchCode)
    }

    func deviceResetStatus(_ context: AuthRequestContext) async throws -> DeviceResetStatus {
        try await deviceResetStatus(id: try context.parameters.require("request_id"))
    }

    func deviceResetStatus(id: String) async throws -> DeviceResetStatus {
        guard let approval = try await kernel.approvals.approval(id: id), approval.kind == Self.approvalKind else {
            throw AuthError.notFound("No such reset request.").worded("password.error.no_reset_request")
        }
        return DeviceResetStatus(
            status: approval.status(at: kernel.clock.now()).rawValue, expiresAt: Timestamp.string(approval.currentExpiry)
        )
    }

    func completeDeviceReset(_ context: AuthRequestContext) async throws -> Message {
        try await completeDeviceReset(id: try context.parameters.require("request_id"))
    }

    func completeDeviceReset(id: String) async throws -> Message {
        let approval = try await kernel.approvals.complete(id: id, kind: Self.approvalKind)
        guard let userID = approval.userID, let user = try await kernel.users.user(id: userID), let email = user.email,
            case .string(let hash) = approval.payload["password_hash"]
        else { throw AuthError.invalidState("The account of this request no longer exists.").worded("password.error.account_gone") }
        let (removed, passkeys) = try await recover(userID, hash: hash, email: email, provesInbox: false)
        await notifyChanged(email: email, how: "device_reset", device: approval.deviceName, removed: removed, passkeys: passkeys)
        kernel.logger.info("password reset approved by another device; every session ended", metadata: ["user.id": "\(userID.lowercased)"])
        await kernel.audit.record("reset_completed", provider: Self.id, user: userID, device: approval.deviceName, reason: "device")
        await kernel.events.credentialChanged(userID, credential: Self.id)
        return Message(message: "Password changed", expiresIn: nil)
    }
}

/// Stops the hashing threads at shutdown.
struct HasherShutdownService: Service {
    let hasher: PasswordHasher
    func run() async throws {
        try? await gracefulShutdown()
        await hasher.shutdown()
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension PasswordProvider: RedactedDescription {}
