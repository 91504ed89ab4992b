import AuthKernel
import AuthStorage
import Foundation

/// Authorization codes (contract §13): single use, 60 seconds, bound to the client, the redirect
/// URI, the PKCE challenge and the nonce; only a hash is stored. A code used twice answers
/// `invalid_grant` and ends the browser session whose tokens it issued.
struct AuthorizationCodes: Sendable {
    let store: any AuthStore
    let clock: any AuthClock
    static let purpose = "oidc.code"
    static let ttl: TimeInterval = 60

    /// What a code stands for.
    struct Grant: Codable, Sendable, Equatable {
        var clientID: String
        var redirectURI: String
        var codeChallenge: String?
        var nonce: String?
        var userID: String
        var sessionID: String
        var scopes: [String]
        var authTime: Int
        var amr: [String]
        /// Set at the first redemption, with the session of the tokens it issued: a second one ends it.
        var used: Bool = false
        var issuedSession: String?
    }

    func issue(_ grant: Grant) async throws -> String {
        let code = Base64URL.encode(SecureRandom.bytes(32))
        let key = Hex.encode(SHA256.hash(code)), now = clock.now()
        let payload = try JSONDecoder().decode([String: JSONValue].self, from: try JSONEncoder().encode(grant))
        try await store.write([.code(purpose: Self.purpose, key: key)]) { state in
            state.put(CodeRecord(purpose: Self.purpose, key: key, digest: "", sentAt: now, expiresAt: now.addingTimeInterval(Self.ttl), payload: payload))
        }
        return code
    }

    enum Redeemed: Sendable {
        case grant(Grant)
        /// Used before: what it issued must end.
        case replayed(Grant)
        case invalid
    }

    /// What a code is to `clientID`, read, spending nothing.
    enum Status: Sendable {
        /// Unexpired, unused and the client's.
        case live
        /// The client's, used already: redeeming it ends what it issued.
        case used
        /// Unknown, expired or another client's.
        case unknown
    }

    func status(_ code: String, clientID: String) async throws -> Status {
        guard !code.isEmpty, code.utf8.count <= 128 else { return .unknown }
        let key = Hex.encode(SHA256.hash(code)), now = clock.now()
        return try await store.read([.code(purpose: Self.purpose, key: key)]) { state -> Status in
            guard let record = state.code(purpose: Self.purpose, key: key), record.expiresAt > now, let payload = record.payload,
                let grant = try? JSONDecoder().decode(Grant.self, from: JSONEncoder().encode(payload)), grant.clientID == clientID
            else { return .unknown }
            return grant.used ? .used : .live
        }
    }

    /// Uses the code up (atomically: of two redemptions racing, one gets the grant), recording
    /// `session`, the session the tokens will belong to, so a replay can end it.
    func redeem(_ code: String, session: UUID) async throws -> Redeemed {
        guard !code.isEmpty, code.utf8.count <= 128 else { return .invalid }
        let key = Hex.encode(SHA256.hash(code)), now = clock.now()
        return try await store.write([.code(purpose: Self.purpose, key: key)]) { state -> Redeemed in
            guard var record = state.code(purpose: Self.purpose, key: key), record.expiresAt > now, let payload = record.payload,
                var grant = try? JSONDecoder().decode(Grant.self, from: JSONEncoder().encode(payload))
            else { return .invalid }
            if grant.used { return .replayed(grant) }
            grant.used = true
            grant.issuedSession = session.lowercased
            record.payload = try JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(grant))
            state.put(record)
            return .grant(grant)
        }
    }
}

/// Remembered consent: per user, client and scopes (contract §13).
struct ConsentGrants: Sendable {
    let store: any AuthStore
    let clock: any AuthClock
    static let purpose = "oidc.grant"

    static func key(user: UUID, client: String) -> String { user.lowercased + ":" + client }

    func covers(user: UUID, client: String, scopes: Set<String>) async throws -> Bool {
        let key = Self.key(user: user, client: client)
        let record = try await store.read([.code(purpose: Self.purpose, key: key)]) { $0.code(purpose: Self.purpose, key: key) }
        guard case .array(let granted)? = record?.payload?["scopes"] else { return false }
        return scopes.isSubset(of: Set(granted.compactMap { if case .string(let s) = $0 { s } else { nil } }))
    }

    /// One remembered consent.
    struct Grant: Sendable {
        var clientID: String
        var scopes: [String]
        var createdAt: String
    }

    /// The user's remembered consents. Grants are kept by `USER:CLIENT`, read among all of them:
    /// a deployment has few.
    func grants(of user: UUID) async throws -> [Grant] {
        let prefix = user.lowercased + ":"
        return try await store.read([.codesOfPurpose(Self.purpose)]) { state in
            state.codes(purpose: Self.purpose).filter { $0.key.hasPrefix(prefix) }.map { record in
                var scopes: [String] = []
                if case .array(let items)? = record.payload?["scopes"] { for case .string(let s) in items { scopes.append(s) } }
                var created = ""
                if case .string(let s)? = record.payload?["created_at"] { created = s }
                return Grant(clientID: String(record.key.dropFirst(prefix.count)), scopes: scopes, createdAt: created)
            }
        }
    }

    /// Forgets every consent of a user (the account is deleted).
    func forgetAll(of user: UUID) async throws {
        let prefix = user.lowercased + ":"
        let keys = try await store.read([.codesOfPurpose(Self.purpose)]) { state in
            state.codes(purpose: Self.purpose).filter { $0.key.hasPrefix(prefix) }.map(\.key)
        }
        guard !keys.isEmpty else { return }
        try await store.write(keys.map { .code(purpose: Self.purpose, key: $0) }) { state in
            for key in keys { if let record = state.code(purpose: Self.purpose, key: key) { state.deleteCode(id: record.id) } }
        }
    }

    /// Forgets a consent; false when there was none.
    func forget(user: UUID, client: String) async throws -> Bool {
        let key = Self.key(user: user, client: client)
        return try await store.write([.code(purpose: Self.purpose, key: key)]) { state -> Bool in
            guard let record = state.code(purpose: Self.purpose, key: key) else { return false }
            state.deleteCode(id: record.id)
            return true
        }
    }

    func remember(user: UUID, client: String, scopes: Set<String>) async throws {
        let key = Self.key(user: user, client: client), now = clock.now()
        try await store.write([.code(purpose: Self.purpose, key: key)]) { state in
            var all = scopes
            if case .array(let granted)? = state.code(purpose: Self.purpose, key: key)?.payload?["scopes"] {
                for case .string(let s) in granted { all.insert(s) }
            }
            state.put(
                CodeRecord(
                    purpose: Self.purpose, key: key, digest: "", sentAt: now, expiresAt: SessionRecord.neverExpires,
                    payload: ["scopes": .array(all.sorted().map { .string($0) }), "created_at": .string(Timestamp.string(now))]))
        }
    }
}
