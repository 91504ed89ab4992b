import AuthKernel
import AuthStorage
import Foundation

/// The registered clients, kept as records beside the one-time codes (as service keys are): by
/// id, with only a hash of each secret.
struct OpenIDClients: Sendable {
    let store: any AuthStore
    let clock: any AuthClock
    /// The configured `audience`: no client id may equal it (its tokens would pass as authd's own).
    let audience: String

    static let purpose = "oidc.client"
    /// Prefix of client secrets, so a leaked one is recognised.
    static let secretPrefix = "authd_cs_"

    /// What `create` answers: the client, and its secret once.
    struct Created: Sendable {
        var client: OpenIDClient
        var secret: String?
    }

    static let algorithms = ["RS256", "EdDSA", "Ed25519"]

    /// Registers a client from `settings` (`name` and `redirect_uris` required).
    func create(_ settings: OpenIDClientSettings) async throws -> Created {
        guard settings.name != nil else { throw AuthError.invalidRequest("Name the client.", field: "name") }
        guard settings.redirectURIs != nil else { throw AuthError.invalidRequest("Give at least one redirect URI.", field: "redirect_uris") }
        var fresh = ""
        // Never one that begins with `-`: `authd clients delete ID` would take it for an option.
        repeat { fresh = Base64URL.encode(SecureRandom.bytes(16)) } while fresh == audience || fresh.hasPrefix("-")
        let id = fresh, now = clock.now()
        let secret = settings.isPublic == true ? nil : Self.newSecret()
        let client = try settings.applied(to: OpenIDClient(id: id, name: "", redirectURIs: [], secretHash: secret.map(Self.hash), createdAt: now))
        let payload = try Self.payload(client)
        try await store.write([.code(purpose: Self.purpose, key: id)]) { state in
            state.put(CodeRecord(purpose: Self.purpose, key: id, digest: "", sentAt: now, expiresAt: SessionRecord.neverExpires, payload: payload))
        }
        return Created(client: client, secret: secret)
    }

    /// Changes what `settings` names; nil when there is no such client. A client stays public or confidential.
    func update(_ id: String, _ settings: OpenIDClientSettings) async throws -> OpenIDClient? {
        if settings.isPublic != nil {
            throw AuthError.invalidRequest("A client stays public or confidential; register a new one to change that.", field: "public")
        }
        return try await change(id) { try settings.applied(to: $0) }
    }

    /// A new secret; the old one keeps working for `grace` seconds (0: it stops now).
    func rotateSecret(_ id: String, grace: Int) async throws -> (OpenIDClient, String)? {
        guard (0...Self.maxGrace).contains(grace) else {
            throw AuthError.invalidRequest("The grace is 0 to \(Self.maxGrace) seconds.", field: "grace")
        }
        let secret = Self.newSecret(), now = clock.now()
        let changed = try await change(id) { client in
            guard let current = client.secretHash else { throw AuthError.invalidState("A public client has no secret.") }
            var c = client
            c.secretHash = Self.hash(secret)
            (c.previousSecretHash, c.previousSecretExpiresAt) = grace > 0 ? (current, now.addingTimeInterval(TimeInterval(grace))) : (nil, nil)
            return c
        }
        return changed.map { ($0, secret) }
    }

    /// The longest a rotated-out secret keeps working: a week.
    static let maxGrace = 7 * 86_400

    private func change(_ id: String, _ body: @Sendable @escaping (OpenIDClient) throws -> OpenIDClient) async throws -> OpenIDClient? {
        guard !id.isEmpty, id.utf8.count <= 128 else { return nil }
        return try await store.write([.code(purpose: Self.purpose, key: id)]) { state -> OpenIDClient? in
            guard var record = state.code(purpose: Self.purpose, key: id), let payload = record.payload else { return nil }
            let changed = try body(try Self.client(payload))
            record.payload = try Self.payload(changed)
            state.put(record)
            return changed
        }
    }

    static func newSecret() -> String { secretPrefix + Base64URL.encode(SecureRandom.bytes(32)) }
    static func hash(_ secret: String) -> String { Hex.encode(SHA256.hash(secret)) }

    func find(_ id: String) async throws -> OpenIDClient? {
        guard !id.isEmpty, id.utf8.count <= 128 else { return nil }
        let record = try await store.read([.code(purpose: Self.purpose, key: id)]) { $0.code(purpose: Self.purpose, key: id) }
        return try record?.payload.map(Self.client)
    }

    func list() async throws -> [OpenIDClient] {
        try await store.read([.codesOfPurpose(Self.purpose)]) { state in state.codes(purpose: Self.purpose) }
            .compactMap { try $0.payload.map(Self.client) }.sorted { $0.createdAt < $1.createdAt }
    }

    /// Removes the client and every consent given to it; false when there was none. Its tokens
    /// stop working: refresh needs the client, userinfo and introspection look it up.
    func delete(_ id: String) async throws -> Bool {
        let suffix = ":" + id
        let consents = try await store.read([.codesOfPurpose(ConsentGrants.purpose)]) { state in
            state.codes(purpose: ConsentGrants.purpose).filter { $0.key.hasSuffix(suffix) }.map(\.key)
        }
        return try await store.write([.code(purpose: Self.purpose, key: id)] + consents.map { .code(purpose: ConsentGrants.purpose, key: $0) }) { state -> Bool in
            guard let record = state.code(purpose: Self.purpose, key: id) else { return false }
            state.deleteCode(id: record.id)
            for key in consents { if let grant = state.code(purpose: ConsentGrants.purpose, key: key) { state.deleteCode(id: grant.id) } }
            return true
        }
    }

    /// The client these credentials authenticate: a confidential one's secret (or, within its
    /// grace, the one it replaced) compared in constant time.
    func authenticate(id: String, secret: String?) async throws -> OpenIDClient? {
        guard let client = try await find(id) else { return nil }
        guard let expected = client.secretHash else { return secret == nil ? client : nil }
        guard let secret, secret.utf8.count <= 256 else { return nil }
        let given = Array(Self.hash(secret).utf8)
        let current = ConstantTime.equals(given, Array(expected.utf8))
        var previous = false
        if let old = client.previousSecretHash, let until = client.previousSecretExpiresAt, until > clock.now() {
            previous = ConstantTime.equals(given, Array(old.utf8))
        }
        return current || previous ? client : nil
    }

    /// The client as its record keeps it. Built field by field: userinfo and every token request
    /// read a client, and a round trip through JSON coders would cost more than the rest of them.
    static func payload(_ c: OpenIDClient) throws -> [String: JSONValue] {
        func strings(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }
        var p: [String: JSONValue] = [
            "id": .string(c.id), "name": .string(c.name), "redirect_uris": strings(c.redirectURIs), "first_party": .bool(c.firstParty),
            "pkce_optional": .bool(c.pkceOptional), "id_token_alg": .string(c.idTokenAlg), "post_logout_redirect_uris": strings(c.postLogoutRedirectURIs),
            "claims": strings(c.claims), "allow_pin": .bool(c.allowPin), "unverified_email": .bool(c.unverifiedEmail),
            "allowed_groups": strings(c.allowedGroups),
            "created_at": .number(c.createdAt.timeIntervalSinceReferenceDate),
        ]
        if let hash = c.secretHash { p["secret_hash"] = .string(hash) }
        if let logo = c.logoURI { p["logo_uri"] = .string(logo) }
        if let old = c.previousSecretHash { p["previous_secret_hash"] = .string(old) }
        if let until = c.previousSecretExpiresAt { p["previous_secret_expires_at"] = .number(until.timeIntervalSinceReferenceDate) }
        return p
    }

    struct MalformedClient: Error {}

    static func client(_ p: [String: JSONValue]) throws -> OpenIDClient {
        func string(_ key: String) -> String? { if case .string(let s)? = p[key] { s } else { nil } }
        func bool(_ key: String) -> Bool { if case .bool(let b)? = p[key] { b } else { false } }
        func strings(_ key: String) -> [String] {
            guard case .array(let items)? = p[key] else { return [] }
            return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        }
        func date(_ key: String) -> Date? { if case .number(let t)? = p[key] { Date(timeIntervalSinceReferenceDate: t) } else { nil } }
        guard let id = string("id"), let name = string("name"), let created = date("created_at") else { throw MalformedClient() }
        var c = OpenIDClient(id: id, name: name, redirectURIs: strings("redirect_uris"), secretHash: string("secret_hash"), createdAt: created)
        (c.firstParty, c.pkceOptional, c.idTokenAlg) = (bool("first_party"), bool("pkce_optional"), string("id_token_alg") ?? "RS256")
        (c.postLogoutRedirectURIs, c.claims, c.allowPin, c.unverifiedEmail) = (strings("post_logout_redirect_uris"), strings("claims"), bool("allow_pin"), bool("unverified_email"))
        (c.previousSecretHash, c.previousSecretExpiresAt) = (string("previous_secret_hash"), date("previous_secret_expires_at"))
        c.allowedGroups = strings("allowed_groups")
        c.logoURI = string("logo_uri")
        return c
    }
}
