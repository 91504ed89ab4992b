public import AuthStorage
public import Foundation

/// Opaque single-use tokens, for the links a mail carries and for the second step of a two-step
/// flow: `ID.SECRET`, 128 random bits of id and 256 of secret, issued for a purpose and a subject
/// (a user's id, an email) with a lifetime.
///
/// Neither part is stored as it was sent: the record is found by a SHA-256 of the id and holds an
/// HMAC of the secret under a server key, so a copy of the store gives nothing to redeem. A token is
/// redeemed once; a wrong secret for a real id spends it too (nobody who was sent the token sends a
/// wrong secret). ``revokeAll(purpose:subject:)`` ends every live token of a subject for a purpose:
/// "a new link cancels the old".
///
/// ```swift
/// let token = try await kernel.tokens.issue(purpose: "magic.link", subject: email, ttl: 900)
/// try await kernel.mailer.send(template: "magic.link", to: email, values: ["link": issuer + "/magic?token=" + token])
/// // … when the link is opened:
/// guard let redeemed = try await kernel.tokens.redeem(purpose: "magic.link", token: token) else { throw AuthError.invalidCode }
/// ```
public struct SingleUseTokens: Sendable {
    let store: any AuthStore
    let secret: [UInt8]
    let clock: any AuthClock

    /// Live tokens one subject may hold for one purpose; issuing another ends the oldest.
    public static let maxPerSubject = 20
    /// The longest lifetime a token may have: thirty days.
    public static let maxTTL = 30 * 86_400

    /// Creates the service.
    package init(store: any AuthStore, secret: [UInt8], clock: any AuthClock) {
        self.store = store
        self.secret = secret
        self.clock = clock
    }

    /// What a token was issued for, handed back when it is redeemed or looked at.
    public struct Token: Sendable, Equatable {
        /// Whom it is for, as given to ``SingleUseTokens/issue(purpose:subject:ttl:payload:)``.
        public var subject: String
        /// The data given with it.
        public var payload: [String: JSONValue]
        /// When it stops working.
        public var expiresAt: Date
    }

    /// Issues a token and returns it for delivery; it is not stored anywhere as sent.
    /// - Parameters:
    ///   - purpose: what it is for, named by your provider (`"magic.link"`); tokens of two purposes never mix.
    ///   - subject: whom it is for (a user's id, an email), at most 320 bytes.
    ///   - ttl: its lifetime in seconds, 1 to ``maxTTL``.
    ///   - payload: data handed back with it (nothing secret: it is stored as it is).
    public func issue(purpose: String, subject: String, ttl: Int, payload: [String: JSONValue] = [:]) async throws -> String {
        precondition((1...Self.maxTTL).contains(ttl), "a token lives 1 second to 30 days")
        precondition(!purpose.isEmpty && purpose.utf8.count <= 64 && subject.utf8.count <= 320, "purpose or subject too long")
        let id = Base64URL.encode(SecureRandom.bytes(16))
        let secret = Base64URL.encode(SecureRandom.bytes(32))
        let now = clock.now()
        let expires = now.addingTimeInterval(TimeInterval(ttl))
        var stored = payload
        stored[Self.subjectField] = .string(subject)
        let record = CodeRecord(
            purpose: Self.tokenPurpose(purpose), key: Self.key(id), digest: Hex.encode(digest(purpose: purpose, id: id, secret: secret)),
            sentAt: now, expiresAt: expires, payload: stored)
        let index = Self.indexKey(purpose: purpose, subject: subject), indexPurpose = Self.indexPurpose(purpose), tokenPurpose = record.purpose
        // The subject's tokens are named in the write (a database store loads only what a write
        // names), so those that expired or were used can be dropped from its list.
        let listed = try await store.read([.code(purpose: indexPurpose, key: index)]) { Self.keys($0.code(purpose: indexPurpose, key: index)) }
        try await store.write([.code(purpose: indexPurpose, key: index), .code(purpose: tokenPurpose, key: record.key)] + listed.map { .code(purpose: tokenPurpose, key: $0) }) { state in
            let named = Set(listed)
            var keys = Self.keys(state.code(purpose: indexPurpose, key: index)).filter { key in
                // One issued meanwhile was not named: it stays listed.
                guard named.contains(key) else { return true }
                return (state.code(purpose: tokenPurpose, key: key)?.expiresAt ?? .distantPast) > now
            }
            // Bounded per subject: the oldest goes first.
            while keys.count >= Self.maxPerSubject {
                state.deleteCode(id: CodeRecord.id(purpose: tokenPurpose, key: keys.removeFirst()))
            }
            keys.append(record.key)
            state.put(record)
            let latest = keys.compactMap { state.code(purpose: tokenPurpose, key: $0)?.expiresAt }.max() ?? expires
            // The list lives as long as its longest-lived token, so the purge takes it with them.
            state.put(CodeRecord(
                purpose: indexPurpose, key: index, digest: "", sentAt: now, expiresAt: max(latest, expires),
                payload: ["keys": .array(keys.map(JSONValue.string))]))
        }
        return id + "." + secret
    }

    /// Records that something presented from outside (an identity provider's ID token) was used,
    /// and answers whether this is its first use: later uses until `until` answer false, on every
    /// instance and after a restart. Only a SHA-256 of `value` is kept, until `until` (at most
    /// ``maxTTL`` from now).
    /// - Parameters:
    ///   - purpose: what it is for, named by your provider (`"oidc.id_token"`).
    ///   - value: what was presented.
    ///   - until: when a second use would be refused anyway (the token's own expiry).
    public func firstUse(purpose: String, value: String, until: Date) async throws -> Bool {
        precondition(!purpose.isEmpty && purpose.utf8.count <= 64, "purpose too long")
        let now = clock.now()
        let expires = min(max(until, now.addingTimeInterval(1)), now.addingTimeInterval(TimeInterval(Self.maxTTL)))
        let key = Hex.encode(SHA256.hash(value)), used = "used:" + purpose
        return try await store.write([.code(purpose: used, key: key)]) { state in
            if let seen = state.code(purpose: used, key: key), seen.expiresAt > now { return false }
            state.put(CodeRecord(purpose: used, key: key, digest: "", sentAt: now, expiresAt: expires))
            return true
        }
    }

    /// The token's subject and payload without spending it (a page that asks "is this you?" before
    /// the confirming POST); nil for an unknown, used, expired or malformed one. A wrong secret for a
    /// real id spends it, as ``redeem(purpose:token:)`` does.
    public func peek(purpose: String, token: String) async throws -> Token? {
        guard let (id, secret) = Self.split(token) else { return nil }
        let key = Self.key(id), now = clock.now(), expected = digest(purpose: purpose, id: id, secret: secret)
        let tokenPurpose = Self.tokenPurpose(purpose)
        let record = try await store.read([.code(purpose: tokenPurpose, key: key)]) { $0.code(purpose: tokenPurpose, key: key) }
        guard let record, record.expiresAt > now else { return nil }
        guard ConstantTime.equals(Hex.decode(record.digest) ?? [], expected) else {
            try await store.write([.code(purpose: tokenPurpose, key: key)]) { $0.deleteCode(id: record.id) }
            return nil
        }
        return Self.token(record)
    }

    /// Spends the token and returns what it was issued for; nil for an unknown, used, expired or
    /// malformed one (a wrong secret for a real id spends it too). Two redemptions at once get it once.
    public func redeem(purpose: String, token: String) async throws -> Token? {
        guard let (id, secret) = Self.split(token) else { return nil }
        let key = Self.key(id), now = clock.now(), expected = digest(purpose: purpose, id: id, secret: secret)
        let tokenPurpose = Self.tokenPurpose(purpose)
        return try await store.write([.code(purpose: tokenPurpose, key: key)]) { state -> Token? in
            guard let record = state.code(purpose: tokenPurpose, key: key) else { return nil }
            state.deleteCode(id: record.id)
            guard record.expiresAt > now, ConstantTime.equals(Hex.decode(record.digest) ?? [], expected) else { return nil }
            return Self.token(record)
        }
    }

    /// Ends every live token of `subject` for `purpose` (a new link cancels the old ones; a recovery
    /// ends what was mailed before it).
    /// - Returns: how many were ended.
    @discardableResult
    public func revokeAll(purpose: String, subject: String) async throws -> Int {
        let index = Self.indexKey(purpose: purpose, subject: subject), indexPurpose = Self.indexPurpose(purpose)
        let tokenPurpose = Self.tokenPurpose(purpose), now = clock.now()
        var ended = 0
        // A token issued between the read and the write is not loaded by it: the next round takes it.
        for _ in 0..<Self.maxPerSubject {
            let listed = try await store.read([.code(purpose: indexPurpose, key: index)]) { Self.keys($0.code(purpose: indexPurpose, key: index)) }
            guard !listed.isEmpty else { break }
            let (left, live) = try await store.write([.code(purpose: indexPurpose, key: index)] + listed.map { .code(purpose: tokenPurpose, key: $0) }) {
                state -> ([String], Int) in
                guard let current = state.code(purpose: indexPurpose, key: index) else { return ([], 0) }
                let named = Set(listed)
                var live = 0
                for key in Self.keys(current) where named.contains(key) {
                    if let record = state.code(purpose: tokenPurpose, key: key) {
                        if record.expiresAt > now { live += 1 }
                        state.deleteCode(id: record.id)
                    }
                }
                let left = Self.keys(current).filter { !named.contains($0) }
                if left.isEmpty {
                    state.deleteCode(id: current.id)
                } else {
                    var kept = current
                    kept.payload = ["keys": .array(left.map(JSONValue.string))]
                    state.put(kept)
                }
                return (left, live)
            }
            ended += live
            if left.isEmpty { break }
        }
        return ended
    }

    // MARK: - Records

    static let subjectField = "_subject"

    func digest(purpose: String, id: String, secret: String) -> [UInt8] {
        SHA256.hmac(key: self.secret, message: Array("token\u{0}\(purpose)\u{0}\(id)\u{0}\(secret)".utf8))
    }

    static func tokenPurpose(_ purpose: String) -> String { "token:" + purpose }
    static func indexPurpose(_ purpose: String) -> String { "token-subject:" + purpose }
    static func key(_ id: String) -> String { Hex.encode(SHA256.hash(id)) }
    static func indexKey(purpose: String, subject: String) -> String { Hex.encode(SHA256.hash(subject)) }

    static func split(_ token: String) -> (String, String)? {
        guard token.utf8.count <= 80 else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 22, parts[1].utf8.count == 43 else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    static func keys(_ index: CodeRecord?) -> [String] {
        guard case .array(let items)? = index?.payload?["keys"] else { return [] }
        return items.compactMap { if case .string(let key) = $0 { key } else { nil } }
    }

    static func token(_ record: CodeRecord) -> Token? {
        guard var payload = record.payload, case .string(let subject)? = payload.removeValue(forKey: subjectField) else { return nil }
        return Token(subject: subject, payload: payload, expiresAt: record.expiresAt)
    }
}
