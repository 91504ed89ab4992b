import AnonymousProvider
public import AuthKernel
import Foundation
public import Hummingbird
import Logging
public import ServiceLifecycle

/// A numeric PIN, and sign-in with user name (or id) and PIN (contract §4 "pin").
///
/// - `PUT /api/v1/auth/pin` (Bearer): set the PIN, or change it with `current_pin`.
/// - `POST /api/v1/auth/pin/verify`: sign in with `user_id` or `username`, and `pin`.
///
/// It brings ``AnonymousProvider`` (anonymous sign-in and user names) along, set by this section's
/// `anonymous_per_ip` and `anonymous_ttl`, unless `providers` lists `anonymous` itself.
public struct PINProvider: AuthProvider {
    /// `pin`: its name in `providers`, its configuration section, `auth_providers` and `amr`.
    public static let id = "pin"
    /// Its sentences: English and German.
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
    /// How the notice of a newly added sign-in method names it, in English; the catalog's
    /// `pin.method_name` words it in other languages.
    public static let methodName = "a PIN"

    let kernel: Kernel
    let settings: PINSettings
    let pepper: [UInt8]
    /// Lock state for usernames and ids that do not exist (see ``DecoyAccounts``).
    let decoys: DecoyAccounts<PINCredential>
    /// Anonymous sign-in and user names, when this provider brings them along.
    let anonymous: AnonymousProvider?

    /// Reads its configuration section and registers its mail and hooks with the kernel.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        self.settings = try PINSettings(&config)
        self.pepper = try kernel.secret(named: "pin-pepper")
        self.decoys = kernel.decoys(Self.id)
        self.anonymous =
            kernel.providerIDs.contains(AnonymousProvider.id)
            ? nil : AnonymousProvider(kernel: kernel, settings: .init(signUpsPerIP: settings.anonymousPerIP, ttl: settings.anonymousTTL))
        // "Not you?" on the notice of a new PIN takes the PIN's secret with its identity.
        kernel.users.removals.register(kind: Self.id) { user, _ in user.secrets[Self.id] = nil }
        // A PIN set with a stolen session must not survive the owner's password reset.
        kernel.users.recovery.register { user in
            guard user.secrets[Self.id] != nil else { return nil }
            user.secrets[Self.id] = nil
            user.identities.removeAll { $0.provider == Self.id }
            // A catalog key: the password provider words it in the owner's language.
            return "pin.recovery.removed"
        }
    }

    /// Anonymous sign-in's, when brought along.
    public var services: [any Service] { anonymous?.services ?? [] }

    struct SetPINBody: Decodable {
        var pin: String
        var currentPIN: String?
        enum CodingKeys: String, CodingKey { case pin, currentPIN = "current_pin" }
    }
    struct VerifyBody: Decodable {
        var userID: String?
        var username: String?
        var pin: String
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case userID = "user_id", username, pin, deviceName = "device_name", platform }
    }

    enum Outcome: Sendable {
        case done
        case changed
        case locked(seconds: Int)
        /// This wrong PIN started the lock (only inside ``verify(_:for:)``; callers see `.locked`).
        case lockStarted(seconds: Int)
        case wrong
        case currentPINRequired
    }

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = anonymous?.routes() ?? RouteCollection(context: AuthRequestContext.self)

        routes.put("pin") { request, context -> Response in
            let principal = try context.requirePrincipal()
            let body = try await request.decodeJSON(as: SetPINBody.self, context: context)
            guard PINFormat.isValidPIN(body.pin) else { throw AuthError.invalidPIN }
            // A stolen access token must not be enough to plant a credential (contract 5).
            try kernel.sessions.requireFresh(principal)
            let outcome = try await setPIN(body, for: principal.user.id)
            switch outcome {
            case .done:
                kernel.logger.info("PIN set", metadata: ["user.id": "\(principal.user.id.lowercased)"])
            case .changed:
                try await kernel.sessions.revokeAll(of: principal.user.id, except: principal.session.id)
                kernel.logger.info("PIN changed; other sessions ended", metadata: ["user.id": "\(principal.user.id.lowercased)"])
                await kernel.audit.record("pin_changed", provider: Self.id, user: principal.user.id, device: principal.session.deviceName)
            case .locked(let seconds), .lockStarted(let seconds):
                throw Self.lockedError(seconds)
            case .wrong:
                throw AuthError.invalidCredentials
            case .currentPINRequired:
                throw AuthError.invalidRequest("A PIN is already set: send it as `current_pin` to change it.", field: "current_pin")
            }
            await kernel.events.credentialChanged(principal.user.id, credential: Self.id)
            return Response(status: .noContent)
        }

        routes.post("pin/verify") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: VerifyBody.self, context: context)
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            guard body.userID != nil || body.username != nil else {
                throw AuthError.invalidRequest("Send `user_id` or `username` with the PIN.", field: "username")
            }
            try await kernel.rateLimiter.consume(settings.attemptsPerIP, key: "pin.verify.ip:\(context.clientKey)")
            let started = ContinuousClock.now
            do {
                return try await signIn(body, device: device)
            } catch let error as AuthError where error.status == .unauthorized || error.status == .tooManyRequests {
                await kernel.audit.record(
                    "sign_in_failed", provider: Self.id, account: Self.account(body), device: device.name, reason: error.code
                )
                // A known and an unknown account reach a refusal by different paths (a journal write
                // vs. a decoy in memory): both answer at the same moment.
                try? await Task.sleep(until: started + Self.refusalFloor, clock: .continuous)
                throw error
            }
        }
        return routes
    }

    /// The least time a refused PIN sign-in takes, whichever path refused it.
    static let refusalFloor = Duration.milliseconds(5)

    private func signIn(_ body: VerifyBody, device: DeviceInfo) async throws -> SignInResponse {
        try await kernel.sessions.signIn(try await verifiedUser(body), amr: [Self.id], device: device)
    }

    /// The account whose PIN this is; every refusal the same 401 (or 429 while locked), a decoy's
    /// work done for an unknown name.
    func verifiedUser(_ body: VerifyBody) async throws -> UserRecord {
        // A name or id that cannot exist is refused before any lookup, with the same answer as an
        // unknown one: nothing is kept, and nothing about it is logged, whatever the client sent.
        if let id = body.userID {
            guard UUID(uuidString: id) != nil else { throw AuthError.invalidCredentials }
        } else if let name = body.username, !Username.isValid(name) {
            throw AuthError.invalidCredentials
        }
        let user: UserRecord? =
            if let id = body.userID { try await UUID(uuidString: id).asyncFlatMap { try await kernel.users.user(id: $0) } }
            else { try await kernel.users.user(username: body.username ?? "") }
        guard let user, user.secret(Self.id, as: PINCredential.self) != nil else {
            // The same check, counter and lock on a decoy: no answer or timing tells the username is unknown.
            let key = body.userID.map { "id:\($0.lowercased())" } ?? "username:\((body.username ?? "").lowercased())"
            let now = kernel.clock.now()
            let (settings, pepper) = (self.settings, self.pepper)
            let pin = body.pin
            let (lock, started) = try await decoys.withRecord(key, now: now, make: { PINCredential(pin: "decoy", pepper: pepper) }) { decoy -> (Int?, Bool) in
                if let remaining = decoy.lockRemaining(now: now) { return (remaining, false) }
                _ = decoy.matches(pin, pepper: pepper)
                let lock = decoy.recordFailure(now: now, settings: settings)
                return (lock, lock != nil)
            }
            if started { await kernel.audit.record("lockout", provider: Self.id, account: Self.account(body)) }
            if let lock { throw Self.lockedError(lock) }
            throw AuthError.invalidCredentials
        }
        switch try await verify(body.pin, for: user.id) {
        case .done, .changed:
            return user
        case .locked(let seconds), .lockStarted(let seconds):
            throw Self.lockedError(seconds)
        case .wrong, .currentPINRequired:
            throw AuthError.invalidCredentials
        }
    }

    /// The account a sign-in named, for the audit log: only a name or id that could exist.
    static func account(_ body: VerifyBody) -> String? {
        if let id = body.userID { return UUID(uuidString: id)?.lowercased }
        return body.username.flatMap { Username.isValid($0) ? $0 : nil }
    }

    static func lockedError(_ seconds: Int) -> AuthError {
        .rateLimited(retryAfter: seconds, message: "PIN sign-in is locked after too many wrong PINs. Try again later.").worded("pin.error.locked")
    }

    /// Sets or changes the PIN atomically; a wrong `current_pin` counts toward the lockout.
    func setPIN(_ body: SetPINBody, for userID: UUID) async throws -> Outcome {
        let now = kernel.clock.now()
        let settings = self.settings, pepper = self.pepper
        let outcome = try await kernel.users.change(userID) { user -> Outcome in
            let existing = user.secret(Self.id, as: PINCredential.self)
            if var existing {
                if let remaining = existing.lockRemaining(now: now) { return .locked(seconds: remaining) }
                guard let current = body.currentPIN else { return .currentPINRequired }
                guard existing.matches(current, pepper: pepper) else {
                    let lock = existing.recordFailure(now: now, settings: settings)
                    try user.setSecret(Self.id, existing)
                    return lock.map { .locked(seconds: $0) } ?? .wrong
                }
            }
            try user.setSecret(Self.id, PINCredential(pin: body.pin, pepper: pepper))
            let identity = Identity(provider: Self.id, subject: user.id.lowercased)
            if !user.identities.contains(identity) { user.identities.append(identity) }
            return existing == nil ? .done : .changed
        }
        if case .locked = outcome { logLockout(userID) }
        return outcome
    }

    /// Checks a PIN atomically: lock first, then the hash; counts failures, resets on success,
    /// and re-hashes a legacy record with a per-user salt on its first success.
    func verify(_ pin: String, for userID: UUID) async throws -> Outcome {
        let now = kernel.clock.now()
        let settings = self.settings, pepper = self.pepper
        // A wrong PIN is counted at once but answered without waiting for the disk, so it takes no
        // longer than a PIN for a username that does not exist; a right one waits below.
        let outcome = try await kernel.users.change(userID, durability: .eventual) { user -> Outcome in
            guard var credential = user.secret(Self.id, as: PINCredential.self) else { return .wrong }
            if let remaining = credential.lockRemaining(now: now) { return .locked(seconds: remaining) }
            if credential.matches(pin, pepper: pepper) {
                if credential.isLegacy { credential = PINCredential(pin: pin, pepper: pepper) } else { credential.recordSuccess() }
                try user.setSecret(Self.id, credential)
                return .done
            }
            let lock = credential.recordFailure(now: now, settings: settings)
            try user.setSecret(Self.id, credential)
            return lock.map { .lockStarted(seconds: $0) } ?? .wrong
        }
        if case .lockStarted(let seconds) = outcome {
            logLockout(userID)
            await kernel.audit.record("lockout", provider: Self.id, user: userID)
            return .locked(seconds: seconds)
        }
        if case .done = outcome { try await kernel.users.waitUntilDurable() }
        return outcome
    }

    private func logLockout(_ userID: UUID) {
        kernel.logger.warning("PIN sign-in locked after repeated wrong PINs", metadata: ["user.id": "\(userID.lowercased)"])
    }
}

extension Optional {
    fileprivate func asyncFlatMap<U>(_ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension PINProvider: RedactedDescription {}
