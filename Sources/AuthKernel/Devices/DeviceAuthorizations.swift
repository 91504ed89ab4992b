package import AuthStorage
package import Foundation
package import Logging

/// Device sign-in (RFC 8628, contract §7): a box without a keyboard shows a short user code, a
/// person approves it from a signed-in app or the `/device` page, and the box's polling gets a
/// session of kind `device` (a limited one, §5).
///
/// One record per request, under its normalised user code, kept with the one-time codes: the
/// device code is `USERCODE.SECRET`, and only the secret's SHA-256 is stored.
package struct DeviceAuthorizations: Sendable {
    let store: any AuthStore
    let sessions: SessionService
    let clock: any AuthClock
    let logger: Logger
    let audit: AuditLog?
    /// The `device` section.
    package let settings: AuthConfig.DeviceSettings
    let pacing = PollPacing()
    /// Where shared instances pace a code's polls (the counters, which a database crash may reset).
    let rateLimiter: RateLimiter
    /// Whether a user may sign in to the app a device code names: a registered OpenID client's
    /// groups (contract §17); any other `client_id` is free-form and names no rule.
    package typealias ClientAccess = @Sendable (_ clientID: String, _ user: UserRecord) async throws -> Bool
    let clientAccess: ClientAccess

    static let purpose = "device_authorization"
    /// The letters of a user code: no vowels (no words), no look-alikes.
    package static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")

    /// Creates the service.
    package init(
        store: any AuthStore, sessions: SessionService, clock: any AuthClock, logger: Logger, audit: AuditLog?, settings: AuthConfig.DeviceSettings,
        rateLimiter: RateLimiter, clientAccess: @escaping ClientAccess = { _, _ in true }
    ) {
        self.clientAccess = clientAccess
        self.rateLimiter = rateLimiter
        self.store = store
        self.sessions = sessions
        self.clock = clock
        self.logger = logger
        self.audit = audit
        self.settings = settings
    }

    /// A new request, for the box to show and poll.
    package struct Started: Sendable {
        /// What the box polls `/oauth/token` with.
        package var deviceCode: String
        /// What the person types, `XXXX-XXXX`.
        package var userCode: String
        /// Seconds it lives.
        package var expiresIn: Int
        /// Seconds between polls.
        package var interval: Int
    }

    /// What a signed-in person is shown before approving.
    package struct Pending: Sendable {
        /// `XXXX-XXXX`.
        package var userCode: String
        /// The client the box named, if any.
        package var clientID: String?
        /// The labels the box reported (shown as reported, never trusted).
        package var device: DeviceInfo
        /// When it was asked.
        package var createdAt: Date
        /// When it stops working.
        package var expiresAt: Date
    }

    /// What a poll of `/oauth/token` finds.
    package enum Poll: Sendable {
        /// Signed in: the box's session.
        case session(SessionResponse)
        /// RFC 8628 §3.5 errors.
        case authorizationPending, slowDown, accessDenied, expiredToken, invalidGrant
    }

    /// Starts a request.
    package func start(clientID: String?, device: DeviceInfo) async throws -> Started {
        let now = clock.now()
        let secret = Base64URL.encode(SecureRandom.bytes(32))
        var payload: [String: JSONValue] = ["status": .string("pending"), "interval": .number(Double(settings.interval))]
        if let clientID { payload["client_id"] = .string(clientID) }
        if let name = device.name { payload["device_name"] = .string(name) }
        if let platform = device.platform { payload["platform"] = .string(platform) }
        let expires = now.addingTimeInterval(TimeInterval(settings.codeTTL))
        // A fresh code that is taken (20^8 codes; only live ones collide) is drawn again.
        for _ in 0..<8 {
            let code = String((0..<8).map { _ in Self.alphabet[Int(SecureRandom.uniform(UInt32(Self.alphabet.count)))] })
            let record = CodeRecord(
                purpose: Self.purpose, key: code, digest: Hex.encode(SHA256.hash(secret)), sentAt: now, expiresAt: expires, payload: payload)
            let stored = try await store.write([.code(purpose: Self.purpose, key: code)]) { state -> Bool in
                if let existing = state.code(purpose: Self.purpose, key: code), existing.expiresAt > now { return false }
                state.put(record)
                return true
            }
            if stored {
                logger.info("device authorization started", metadata: ["device.name": "\(LogSafe.text(device.name ?? "-", maxLength: 100))"])
                return Started(deviceCode: code + "." + secret, userCode: Self.display(code), expiresIn: settings.codeTTL, interval: settings.interval)
            }
        }
        throw AuthError.unavailable
    }

    /// The user code as people type it: letters only, upper case, dashes and spaces ignored; nil when
    /// it cannot be one.
    package static func normalise(_ text: String) -> String? {
        guard text.utf8.count <= 32 else { return nil }
        let letters = text.uppercased().filter { $0 != "-" && $0 != " " }
        guard letters.count == 8, letters.allSatisfy({ alphabet.contains($0) }) else { return nil }
        return letters
    }

    /// `BCDFGHJK` as `BCDF-GHJK`.
    package static func display(_ code: String) -> String { "\(code.prefix(4))-\(code.dropFirst(4))" }

    /// The pending request a person is about to approve.
    /// - Throws: 404 `NOT_FOUND` when no request of that code is pending.
    package func pending(_ userCode: String) async throws -> Pending {
        guard let code = Self.normalise(userCode) else { throw AuthError.notFound("No such device code.") }
        let now = clock.now()
        let record = try await store.read([.code(purpose: Self.purpose, key: code)]) { $0.code(purpose: Self.purpose, key: code) }
        guard let record, record.expiresAt > now, case .string("pending") = record.payload?["status"] else {
            throw AuthError.notFound("No such device code, or it has expired or been answered.")
        }
        return Self.pending(record)
    }

    static func pending(_ record: CodeRecord) -> Pending {
        var device = DeviceInfo.none
        if case .string(let name) = record.payload?["device_name"] { device.name = name }
        if case .string(let platform) = record.payload?["platform"] { device.platform = platform }
        var clientID: String?
        if case .string(let id) = record.payload?["client_id"] { clientID = id }
        return Pending(userCode: display(record.key), clientID: clientID, device: device, createdAt: record.sentAt, expiresAt: record.expiresAt)
    }

    /// Approves (`userID` set) or denies a pending request for the signed-in `userID`. An approval is
    /// bound to the user's credential version of that moment: a password reset or change, a disable
    /// or the admin ending the user's sessions before the device collects it denies it (contract §12).
    /// - Throws: 404 `NOT_FOUND` (unknown or expired); 409 `INVALID_STATE` (already answered).
    package func answer(_ userCode: String, approve: Bool, by userID: UUID, session sessionID: UUID) async throws -> Pending {
        guard let code = Self.normalise(userCode) else { throw AuthError.notFound("No such device code.") }
        let now = clock.now()
        if approve, let asked = try await store.read([.code(purpose: Self.purpose, key: code), .user(userID)], { state in
            state.code(purpose: Self.purpose, key: code).flatMap { Self.pending($0).clientID }.flatMap { id in state.user(id: userID).map { (id, $0) } }
        }), try await !clientAccess(asked.0, asked.1) {
            throw AuthError.noAccessToApp
        }
        // The user, the answering session, then the code: the order every write that takes them locks
        // them in. The session is checked here too: a reset that ended it while the request was on
        // its way must win (contract §12).
        let record = try await store.write([.user(userID), .session(sessionID), .code(purpose: Self.purpose, key: code)]) { state -> CodeRecord in
            guard let live = state.session(id: sessionID), live.userID == userID, live.expiresAt > now else { throw AuthError.unauthorized }
            guard var record = state.code(purpose: Self.purpose, key: code), record.expiresAt > now else {
                throw AuthError.notFound("No such device code, or it has expired.")
            }
            guard case .string("pending") = record.payload?["status"] else { throw AuthError.invalidState("This device code has been answered already.") }
            guard let user = state.user(id: userID) else { throw AuthError.unauthorized }
            record.payload?["status"] = .string(approve ? "approved" : "denied")
            record.payload?["user_id"] = .string(userID.lowercased)
            record.payload?["credential_version"] = .number(Double(user.credentialVersion))
            state.put(record)
            return record
        }
        let pending = Self.pending(record)
        logger.info(approve ? "device approved" : "device denied", metadata: ["user.id": "\(userID.lowercased)"])
        await audit?.record(approve ? "device_approved" : "device_denied", user: userID, device: pending.device.name)
        if approve {
            var data: [String: JSONValue] = ["user_id": .string(userID.lowercased)]
            if let name = pending.device.name { data["device_name"] = .string(name) }
            if let platform = pending.device.platform { data["platform"] = .string(platform) }
            if let client = pending.clientID { data["client_id"] = .string(client) }
            await sessions.events.emit("device.approved", data)
        }
        return pending
    }

    /// A poll of `/oauth/token` with `device_code` (and `client_id` when the request named one).
    package func poll(deviceCode: String, clientID: String?) async throws -> Poll {
        let parts = deviceCode.split(separator: ".", maxSplits: 1)
        guard deviceCode.utf8.count <= 128, parts.count == 2, let code = Self.normalise(String(parts[0])) else { return .invalidGrant }
        let presented = SHA256.hash(String(parts[1]))
        let now = clock.now()
        let interval = TimeInterval(settings.interval)
        // A read first: a pending code (what nearly every poll finds) is answered without a write.
        let found = try await store.read([.code(purpose: Self.purpose, key: code)]) { $0.code(purpose: Self.purpose, key: code) }
        guard let found, ConstantTime.equals(presented, Hex.decode(found.digest) ?? []) else { return .invalidGrant }
        var expected: String?
        if case .string(let id) = found.payload?["client_id"] { expected = id }
        guard expected == clientID else { return .invalidGrant }
        guard found.expiresAt > now else {
            pacing.forget(code)
            return .expiredToken
        }
        switch found.payload?["status"] {
        case .string("pending"):
            // One process holds every poll of a file store: its memory paces them. Instances sharing
            // a database may each get polls of one code, so there the pace is kept with the shared
            // rate-limit counters (one round trip; a database crash resets it, which costs nothing).
            guard store.isShared else {
                return pacing.tooSoon(code, now: now.timeIntervalSince1970, interval: interval) ? .slowDown : .authorizationPending
            }
            return try await rateLimiter.pacePoll(key: "device-poll:" + code, interval: interval) ? .slowDown : .authorizationPending
        case .string("denied"):
            pacing.forget(code)
            return .accessDenied
        case .string("approved"):
            break
        default:
            pacing.forget(code)
            return .invalidGrant
        }
        pacing.forget(code)
        // Approved: used up in one write (two polls racing get one session), then the session.
        let outcome = try await store.write([.code(purpose: Self.purpose, key: code)]) { state -> (Poll, UUID?, DeviceInfo, Int) in
            guard var record = state.code(purpose: Self.purpose, key: code), record.digest == found.digest, record.expiresAt > now,
                var payload = record.payload, case .string("approved") = payload["status"],
                case .string(let id) = payload["user_id"], let userID = UUID(uuidString: id)
            else { return (.invalidGrant, nil, .none, 0) }
            let pending = Self.pending(record)
            var version = 0
            if case .number(let n) = payload["credential_version"] { version = Int(n) }
            payload["status"] = .string("used")
            record.payload = payload
            state.put(record)
            return (.invalidGrant, userID, pending.device, version)  // becomes the session below
        }
        guard let userID = outcome.1 else { return outcome.0 }
        // The code is used (durably: the write above waited) before the session starts: a crash in
        // between loses a sign-in, never doubles one.
        guard var user = try await store.read([.user(userID)], { $0.user(id: userID) }) else { return .invalidGrant }
        // Removed from the app's groups since the approval: no session.
        if let clientID, try await !clientAccess(clientID, user) { return .accessDenied }
        // Recovery reaches what was approved before it (contract §12): the session starts only if
        // the credentials are those the approval saw, checked in the session's own write.
        user.credentialVersion = outcome.3
        let session: SessionResponse
        do {
            session = try await sessions.startSession(user, amr: ["device"], device: outcome.2, clientID: clientID)
        } catch let error as AuthError where [AuthError.invalidCredentials.code, AuthError.accountDisabled.code, AuthError.unauthorized.code].contains(error.code) {
            logger.info("approved device refused: the account changed since", metadata: ["user.id": "\(userID.lowercased)"])
            return .accessDenied
        }
        logger.info("device signed in", metadata: ["user.id": "\(userID.lowercased)"])
        return .session(session)
    }
}
