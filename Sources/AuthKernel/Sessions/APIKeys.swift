package import AuthStorage
package import Foundation
import Logging

/// API keys (contract §6): long-lived secrets a device keeps and exchanges for short-lived access
/// tokens. A key is a session of kind `api_key`: listed, ended and revoked like one, ended by a
/// password change or reset and by account deletion. Its one stored hash is the key's SHA-256 in the
/// session's refresh hashes (the same index finds it), which is exchanged, never rotated.
extension SessionService {
    /// Keys start with this, so secret scanners can match them.
    package static let apiKeyPrefix = "authd_ak_"
    /// Where ended keys leave a tombstone, so an exchange can say `revoked` or `expired` rather than `unknown`.
    package static let endedKeyPurpose = "api_key.ended"
    /// How long a tombstone says why a key stopped working.
    static let tombstoneTTL = 90 * 86_400
    /// An exchange writes `last_used_at` only when it moved this far (seconds): no write per exchange.
    static let lastUsedGranularity: TimeInterval = 60

    /// The `api_keys` settings.
    package var apiKeySettings: AuthConfig.APIKeySettings { settings.apiKeys }

    /// A key just made: the secret is in here and nowhere else.
    package struct CreatedAPIKey: Sendable {
        /// The key's session.
        package var session: SessionRecord
        /// `authd_ak_…`.
        package var secret: String
    }

    /// Makes a key for `principal`'s user (the caller has checked that the session is fresh and full).
    /// - Throws: 409 `INVALID_STATE` when the user already has `api_keys.max_per_user` keys.
    package func createAPIKey(for principal: Principal, name: String, expiresIn: Int?) async throws -> CreatedAPIKey {
        let now = clock.now()
        let body = Base64URL.encode(SecureRandom.bytes(32))
        let secret = Self.apiKeyPrefix + body
        var session = SessionRecord(
            userID: principal.user.id, deviceName: name, platform: nil, amr: ["api_key"], createdAt: now,
            expiresAt: expiresIn.map { now.addingTimeInterval(TimeInterval($0)) } ?? SessionRecord.neverExpires,
            refreshHash: RefreshToken.hash(secret)
        )
        session.kind = .apiKey
        session.keyPrefix = String(body.prefix(8))
        session.network = sealedNetwork()
        let userID = principal.user.id, limit = settings.apiKeys.maxPerUser, record = session
        try await store.write([.user(userID), .sessionsOfUser(userID)]) { state in
            guard state.user(id: userID) != nil else { throw AuthError.unauthorized }
            let held = state.sessions(userID: userID).filter { $0.isAPIKey && $0.expiresAt > now }.count
            guard held < limit else { throw AuthError.invalidState("This account has \(limit) API keys, the most it may have. Revoke one first.") }
            state.put(record)
        }
        logger.info("api key created", metadata: ["user.id": "\(userID.lowercased)", "session.id": "\(session.id.lowercased)", "key.prefix": "\(session.keyPrefix ?? "")"])
        await audit?.record("api_key_created", user: userID, device: Self.keyLabel(session))
        await events.emit("api_key.created", AccountEvents.data(session))
        return CreatedAPIKey(session: session, secret: secret)
    }

    /// The live keys of a user, oldest first.
    package func apiKeys(of userID: UUID) async throws -> [SessionRecord] {
        try await sessions(of: userID).filter(\.isAPIKey)
    }

    /// Revokes one key of a user.
    /// - Throws: 404 `NOT_FOUND` when the user has no such key.
    package func revokeAPIKey(_ id: UUID, of userID: UUID) async throws {
        let now = clock.now()
        let ended = try await store.write([.session(id)]) { state -> SessionRecord in
            guard let session = state.session(id: id), session.userID == userID, session.isAPIKey else {
                throw AuthError.notFound("No such API key.")
            }
            Self.end(session, in: &state, now: now)
            return session
        }
        await events.sessionsEnded([ended])
        logger.info("api key revoked", metadata: ["user.id": "\(userID.lowercased)", "session.id": "\(id.lowercased)"])
        await audit?.record("api_key_revoked", user: userID, device: Self.keyLabel(ended))
    }

    /// An access token for a key: `sid` is the key's id, `amr` `["api_key"]`, `api_keys.access_ttl` long.
    /// - Throws: 401 `INVALID_API_KEY` (`unknown`, `revoked`, `expired`); 429 per key.
    package func exchangeAPIKey(_ presented: String) async throws -> (accessToken: String, expiresIn: Int) {
        // Bounded and shaped before anything is hashed or looked up.
        guard presented.utf8.count <= 256, presented.hasPrefix(Self.apiKeyPrefix) else { throw AuthError.invalidAPIKey("unknown") }
        let hash = RefreshToken.hash(presented)
        let now = clock.now()
        // The session, then its user: a database backend loads only the rows a read names.
        let key = try await store.read([.sessionByRefreshHash(hash)]) { state -> SessionRecord? in
            state.session(refreshHash: hash).flatMap { $0.isAPIKey ? $0 : nil }
        }
        var user: UserRecord?
        if let key { user = try await store.read([.user(key.userID)]) { $0.user(id: key.userID) } }
        guard let session = key, let user else {
            let tombstone = try await store.read([.code(purpose: Self.endedKeyPurpose, key: hash)]) {
                $0.code(purpose: Self.endedKeyPurpose, key: hash)?.payload?["reason"]
            }
            if case .string(let reason) = tombstone, ["revoked", "expired"].contains(reason) { throw AuthError.invalidAPIKey(reason) }
            throw AuthError.invalidAPIKey("unknown")
        }
        guard session.expiresAt > now else { throw AuthError.invalidAPIKey("expired") }
        guard user.disabledAt == nil else { throw AuthError.accountDisabled }
        try await rateLimiter.consume(
            settings.apiKeys.exchangesPerKey, key: "api_key:\(session.id.lowercased)", message: "Too many exchanges for this API key. Wait before trying again.")
        if now.timeIntervalSince(session.lastUsedAt) >= Self.lastUsedGranularity {
            let id = session.id
            try await store.write([.session(id)], durability: .eventual) { state in
                guard var current = state.session(id: id) else { return }
                current.lastUsedAt = now
                state.put(current)
            }
        }
        let ttl = settings.apiKeys.accessTTL
        return (try accessToken(user: user, session: session, now: now, ttl: ttl), ttl)
    }

    /// The live key `presented` is and its user, for introspection: nil when it is unknown, ended or
    /// expired, or its user is disabled. Not a use of the key (`last_used_at` stays).
    package func activeAPIKey(_ presented: String) async throws -> (SessionRecord, UserRecord)? {
        guard presented.utf8.count <= 256, presented.hasPrefix(Self.apiKeyPrefix) else { return nil }
        let hash = RefreshToken.hash(presented)
        let now = clock.now()
        guard let key = try await store.read([.sessionByRefreshHash(hash)], { $0.session(refreshHash: hash) }), key.isAPIKey, key.expiresAt > now,
            let user = try await store.read([.user(key.userID)], { $0.user(id: key.userID) }), user.disabledAt == nil
        else { return nil }
        return (key, user)
    }

    /// Deletes `session` from `state`; an API key leaves a tombstone saying why it stopped working.
    package static func end(_ session: SessionRecord, in state: inout StoreState, now: Date, reason: String = "revoked") {
        state.deleteSession(id: session.id)
        guard session.isAPIKey, let hash = session.refreshHashes.first else { return }
        state.put(
            CodeRecord(
                purpose: endedKeyPurpose, key: hash, digest: "", sentAt: now, expiresAt: now.addingTimeInterval(TimeInterval(tombstoneTTL)),
                payload: ["reason": .string(reason)]))
    }

    /// How logs, the audit log and the admin commands name a key: its name and prefix, never the secret.
    package static func keyLabel(_ session: SessionRecord) -> String {
        "\(session.deviceName ?? "-") (\(apiKeyPrefix)\(session.keyPrefix ?? "")…)"
    }
}
