public import AuthKernel
import Foundation
public import Hummingbird
import Logging

/// Second factors (contract §10): a TOTP authenticator app (RFC 6238) and ten single-use recovery
/// codes. Once a user has confirmed an app, every sign-in of theirs, whichever provider checked
/// the first factor, answers the 202 challenge, completed at `POST /api/v1/auth/mfa/verify` with
/// `totp` or `recovery_code`.
///
/// - `POST /api/v1/auth/mfa/totp/enroll` (fresh session): a new secret and its `otpauth://` URI.
/// - `POST /api/v1/auth/mfa/totp/confirm` with the app's first code: TOTP on, ten recovery codes.
/// - `DELETE /api/v1/auth/mfa/totp` (fresh session): TOTP and the recovery codes off.
/// - `POST /api/v1/auth/mfa/recovery-codes` (fresh session): a new set of recovery codes.
public struct TOTPProvider: AuthProvider {
    /// `totp`: its name in `providers` and its configuration section.
    public static let id = "totp"
    /// Its sentences: English and German.
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
    /// How the notice of a newly added sign-in method names it.
    public static let methodName = "an authenticator app (TOTP)"
    /// Started only when `providers` lists it.
    public static let startsByDefault = false

    let kernel: Kernel
    let settings: TOTPSettings
    let box: SecretBox
    let pepper: [UInt8]

    /// Reads its section and registers its second factors and sign-in policy.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        self.settings = try TOTPSettings(&config)
        self.box = try SecretBox(key: Array(try kernel.secret(named: "totp").prefix(SecretBox.keyBytes)))
        self.pepper = try kernel.secret(named: "recovery-codes")
        kernel.signInHooks.register(TOTPFactor(provider: self))
        kernel.signInHooks.register(RecoveryCodeFactor(provider: self))
        kernel.signInHooks.register(Policy(hooks: kernel.signInHooks))
        // "Not you?" on the notice of a new authenticator app takes the app and its recovery codes away.
        kernel.users.removals.register(kind: Self.id) { user, _ in
            for key in [TOTPEnrollment.key, RecoveryCodes.key, FactorLock.key] { user.secrets[key] = nil }
        }
    }

    struct ConfirmBody: Decodable { var code: String }

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)

        routes.post("mfa/totp/enroll") { request, context -> Response in
            Self.private(try await enroll(try context.requirePrincipal()).response(from: request, context: context))
        }

        routes.post("mfa/totp/confirm") { request, context -> Response in
            let principal = try context.requirePrincipal()
            let body = try await request.decodeJSON(as: ConfirmBody.self, context: context)
            return Self.private(try Codes(recoveryCodes: try await confirm(principal, code: body.code)).response(from: request, context: context))
        }

        routes.delete("mfa/totp") { _, context -> Response in
            try await disable(try context.requirePrincipal())
            return Response(status: .noContent)
        }

        routes.post("mfa/recovery-codes") { request, context -> Response in
            let principal = try context.requirePrincipal()
            try kernel.sessions.requireFresh(principal)
            let (codes, stored) = RecoveryCodes.generate(pepper: pepper, now: kernel.clock.now())
            let hooks = kernel.signInHooks
            try await kernel.users.change(principal.user.id) { user in
                guard hooks.hasSecondFactor(user) else {
                    throw AuthError.invalidState("Recovery codes stand in for a second factor: set up TOTP or a passkey first.")
                }
                try user.setSecret(RecoveryCodes.key, stored)
            }
            kernel.logger.info("recovery codes replaced", metadata: ["user.id": "\(principal.user.id.lowercased)"])
            await kernel.audit.record("recovery_codes_replaced", provider: Self.id, user: principal.user.id, device: principal.session.deviceName)
            await kernel.events.credentialChanged(principal.user.id, credential: "recovery_code")
            return try Self.private(Codes(recoveryCodes: codes).response(from: request, context: context))
        }
        return routes
    }

    /// A new secret for a fresh session's user, waiting for the app's first code.
    func enroll(_ principal: Principal) async throws -> Enrolment {
        try kernel.sessions.requireFresh(principal)
        let secret = SecureRandom.bytes(20)
        let now = kernel.clock.now()
        let pending = TOTPEnrollment(
            sealedSecret: box.seal(Base64URL.encode(secret)), createdAt: now.timeIntervalSince1970, confirmed: false,
            sessionID: principal.session.id.lowercased, attempts: 0)
        try await kernel.users.change(principal.user.id) { user in
            if user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self)?.confirmed == true {
                throw AuthError.invalidState("TOTP is already on for this account: delete it first to enrol another app.").worded("totp.error.already_on")
            }
            try user.setSecret(TOTPEnrollment.key, pending)
        }
        let encoded = Base32.encode(secret)
        return Enrolment(secret: encoded, otpauthURI: otpauthURI(secret: encoded, user: principal.user))
    }

    /// The app's first code turns TOTP on; the ten recovery codes, shown once.
    func confirm(_ principal: Principal, code: String) async throws -> [String] {
        let now = kernel.clock.now()
        let (codes, stored) = RecoveryCodes.generate(pepper: pepper, now: now)
        let (box, settings) = (self.box, self.settings)
        let sessionID = principal.session.id.lowercased
        enum Outcome { case confirmed, wrong(remaining: Int), none }
        let outcome = try await kernel.users.change(principal.user.id) { user -> Outcome in
            guard var totp = user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self), !totp.confirmed,
                now.timeIntervalSince1970 - totp.createdAt <= TOTPEnrollment.pendingLifetime, totp.sessionID == sessionID
            else { return .none }
            guard let sealed = box.open(totp.sealedSecret), let secret = Base64URL.decode(sealed),
                let step = TOTPCode.matchingStep(code, secret: secret, now: now, after: nil)
            else {
                // Wrong first codes count: an enrolment dies after max_attempts of them.
                totp.attempts = (totp.attempts ?? 0) + 1
                let remaining = max(0, settings.maxAttempts - (totp.attempts ?? 0))
                try user.setSecret(TOTPEnrollment.key, remaining == 0 ? nil : totp)
                return .wrong(remaining: remaining)
            }
            totp.confirmed = true
            totp.lastStep = step
            totp.sessionID = nil
            totp.attempts = nil
            totp.createdAt = now.timeIntervalSince1970
            try user.setSecret(TOTPEnrollment.key, totp)
            try user.setSecret(RecoveryCodes.key, stored)
            try user.setSecret(FactorLock.key, Optional<FactorLock>.none)
            return .confirmed
        }
        switch outcome {
        case .none:
            throw AuthError.invalidState("No TOTP enrolment of this session is waiting: start one with POST /api/v1/auth/mfa/totp/enroll.")
        case .wrong(let remaining):
            throw AuthError.invalidCode(attemptsRemaining: remaining)
        case .confirmed:
            kernel.logger.info("TOTP turned on", metadata: ["user.id": "\(principal.user.id.lowercased)"])
            await kernel.audit.record("totp_enabled", provider: Self.id, user: principal.user.id, device: principal.session.deviceName)
            await kernel.users.noticeMethodAdded(principal.user, method: Self.methodName, credential: .provided(kind: Self.id, reference: ""))
            await kernel.events.credentialChanged(principal.user.id, credential: Self.id)
            return codes
        }
    }

    /// TOTP and the recovery codes off (a fresh session).
    func disable(_ principal: Principal) async throws {
        try kernel.sessions.requireFresh(principal)
        let removed = try await kernel.users.change(principal.user.id) { user -> Bool in
            guard user.secrets[TOTPEnrollment.key] != nil else { return false }
            for key in [TOTPEnrollment.key, RecoveryCodes.key, FactorLock.key] { user.secrets[key] = nil }
            return true
        }
        guard removed else { throw AuthError.notFound("TOTP is not on for this account.").worded("totp.error.not_on") }
        kernel.logger.info("TOTP turned off", metadata: ["user.id": "\(principal.user.id.lowercased)"])
        await kernel.audit.record("totp_disabled", provider: Self.id, user: principal.user.id, device: principal.session.deviceName)
        await kernel.events.credentialChanged(principal.user.id, credential: Self.id)
    }

    struct Enrolment: ResponseEncodable {
        var secret: String
        var otpauthURI: String
        enum CodingKeys: String, CodingKey { case secret, otpauthURI = "otpauth_uri" }
    }

    struct Codes: ResponseEncodable {
        var recoveryCodes: [String]
        enum CodingKeys: String, CodingKey { case recoveryCodes = "recovery_codes" }
    }

    /// A secret in the answer: no cache, proxy or browser may keep it.
    static func `private`(_ response: Response) -> Response {
        var response = response
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `otpauth://totp/ISSUER:ACCOUNT?secret=…&issuer=…` (the Key URI Format every app reads).
    func otpauthURI(secret: String, user: UserRecord) -> String {
        let account = user.email ?? user.username ?? user.id.lowercased
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        let label = (settings.issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? "authd") + ":"
            + (account.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        let issuer = settings.issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? "authd"
        return "otpauth://totp/\(label)?secret=\(secret)&issuer=\(issuer)&algorithm=SHA1&digits=\(TOTPCode.digits)&period=\(Int(TOTPCode.period))"
    }

    /// The secret of an enrolment, opened.
    func open(_ totp: TOTPEnrollment) -> [UInt8]? {
        box.open(totp.sealedSecret).flatMap { Base64URL.decode($0) }
    }

    /// Checks an app's code in one write under the lockout: a right code clears the failures; the
    /// wrong one that reaches `max_attempts` locks the app's codes for `lockout` seconds (429).
    func check(_ userID: UUID, _ totp: @escaping @Sendable (inout TOTPEnrollment, Date) -> Bool) async throws -> Bool {
        enum Verdict { case right, wrong, locked(Int), lockStarted(Int) }
        let now = kernel.clock.now()
        let settings = self.settings
        let verdict = try await kernel.users.change(userID) { user -> Verdict in
            var lock = user.secret(FactorLock.key, as: FactorLock.self) ?? FactorLock()
            if let remaining = lock.remaining(now: now) { return .locked(remaining) }
            if var enrollment = user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self), totp(&enrollment, now) {
                try user.setSecret(TOTPEnrollment.key, enrollment)
                if user.secrets[FactorLock.key] != nil { try user.setSecret(FactorLock.key, Optional<FactorLock>.none) }
                return .right
            }
            let started = lock.recordFailure(now: now, settings: settings)
            try user.setSecret(FactorLock.key, lock)
            return started.map { .lockStarted($0) } ?? .wrong
        }
        switch verdict {
        case .right: return true
        case .wrong: return false
        case .locked(let seconds):
            throw AuthError.rateLimited(retryAfter: seconds, message: "Second-factor codes are locked after too many wrong ones. Try again later.")
                .worded("totp.error.locked")
        case .lockStarted(let seconds):
            kernel.logger.notice("second factor locked", metadata: ["user.id": "\(userID.lowercased)", "seconds": "\(seconds)"])
            await kernel.audit.record("lockout", provider: Self.id, user: userID)
            throw AuthError.rateLimited(retryAfter: seconds, message: "Second-factor codes are locked after too many wrong ones. Try again later.")
                .worded("totp.error.locked")
        }
    }

    /// Uses up the recovery code `code` names, in one write; whether there was one. Not under the
    /// lockout: someone who knows the password must not be able to keep the owner out.
    func useRecoveryCode(_ code: String, of userID: UUID) async throws -> Bool {
        let pepper = self.pepper
        return try await kernel.users.change(userID) { user -> Bool in
            guard var codes = user.secret(RecoveryCodes.key, as: RecoveryCodes.self), codes.use(code, pepper: pepper) else { return false }
            try user.setSecret(RecoveryCodes.key, codes)
            return true
        }
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension TOTPProvider: RedactedDescription {}
