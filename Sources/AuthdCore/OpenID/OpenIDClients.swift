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

    func create(name: String, redirectURIs: [String], isPublic: Bool, firstParty: Bool, pkceOptional: Bool, idTokenAlg: String = "RS256") async throws -> Created {
        guard Self.algorithms.contains(idTokenAlg) else { throw AuthError.invalidRequest("The ID token algorithm is RS256, EdDSA or Ed25519.", field: "id_token_alg") }
        guard (1...100).contains(name.count) else { throw AuthError.invalidRequest("A client's name is 1 to 100 characters.", field: "name") }
        guard !redirectURIs.isEmpty, redirectURIs.count <= 20, redirectURIs.allSatisfy(OpenIDClient.isValidRedirect) else {
            throw AuthError.invalidRequest(
                "Give 1 to 20 redirect URIs: https, http to loopback, or a native app's own scheme (com.example.app:/…), without a fragment.",
                field: "redirect_uris")
        }
        if isPublic, pkceOptional { throw AuthError.invalidRequest("A public client always uses PKCE.", field: "pkce") }
        var fresh = ""
        repeat { fresh = Base64URL.encode(SecureRandom.bytes(16)) } while fresh == audience
        let id = fresh
        let secret = isPublic ? nil : Self.secretPrefix + Base64URL.encode(SecureRandom.bytes(32))
        let client = OpenIDClient(
            id: id, name: name, redirectURIs: redirectURIs, secretHash: secret.map { Hex.encode(SHA256.hash($0)) }, firstParty: firstParty,
            pkceOptional: pkceOptional, idTokenAlg: idTokenAlg, createdAt: clock.now())
        let payload = try Self.payload(client)
        let now = clock.now()
        try await store.write([.code(purpose: Self.purpose, key: id)]) { state in
            state.put(CodeRecord(purpose: Self.purpose, key: id, digest: "", sentAt: now, expiresAt: SessionRecord.neverExpires, payload: payload))
        }
        return Created(client: client, secret: secret)
    }

    func find(_ id: String) async throws -> OpenIDClient? {
        guard !id.isEmpty, id.utf8.count <= 128 else { return nil }
        let record = try await store.read([.code(purpose: Self.purpose, key: id)]) { $0.code(purpose: Self.purpose, key: id) }
        return try record?.payload.map(Self.client)
    }

    func list() async throws -> [OpenIDClient] {
        try await store.read([.codesOfPurpose(Self.purpose)]) { state in state.codes(purpose: Self.purpose) }
            .compactMap { try $0.payload.map(Self.client) }.sorted { $0.createdAt < $1.createdAt }
    }

    func delete(_ id: String) async throws -> Bool {
        try await store.write([.code(purpose: Self.purpose, key: id)]) { state -> Bool in
            guard let record = state.code(purpose: Self.purpose, key: id) else { return false }
            state.deleteCode(id: record.id)
            return true
        }
    }

    /// The client these credentials authenticate: a confidential one's secret compared in constant time.
    func authenticate(id: String, secret: String?) async throws -> OpenIDClient? {
        guard let client = try await find(id) else { return nil }
        guard let expected = client.secretHash else { return secret == nil ? client : nil }
        guard let secret, secret.utf8.count <= 256 else { return nil }
        return ConstantTime.equals(Array(Hex.encode(SHA256.hash(secret)).utf8), Array(expected.utf8)) ? client : nil
    }

    static func payload(_ client: OpenIDClient) throws -> [String: JSONValue] {
        let data = try JSONEncoder().encode(client)
        return try JSONDecoder().decode([String: JSONValue].self, from: data)
    }

    static func client(_ payload: [String: JSONValue]) throws -> OpenIDClient {
        try JSONDecoder().decode(OpenIDClient.self, from: try JSONEncoder().encode(payload))
    }
}
