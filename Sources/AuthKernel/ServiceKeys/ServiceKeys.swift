package import AuthStorage
package import Foundation

/// Service keys (contract §8): secrets `authd_sk_…` an app's own backend holds to ask authd about
/// tokens (`/oauth/introspect`) and, later, to manage users. Made, listed and revoked only by the
/// operator's `authd service-keys` commands. Only a hash is stored, with the one-time codes (as a
/// record per name and one per hash), so both backends keep them without a schema of their own.
package struct ServiceKeys: Sendable {
    let store: any AuthStore
    let clock: any AuthClock

    package static let prefix = "authd_sk_"
    static let byName = "service_key"
    static let byHash = "service_key.hash"

    /// Creates the service.
    package init(store: any AuthStore, clock: any AuthClock) {
        self.store = store
        self.clock = clock
    }

    /// A key as the operator sees it: never its secret.
    package struct Key: Sendable, Equatable, Codable {
        /// The name it was created with.
        package var name: String
        /// The first 8 characters after `authd_sk_`.
        package var prefix: String
        /// When it was made.
        package var createdAt: Date
    }

    /// A name: 1 to 64 of letters, digits, `-`, `_`, `.`.
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F || b == 0x2E
        }
    }

    /// Makes a key named `name` and returns its secret (shown once).
    /// - Throws: 400 `INVALID_REQUEST` for a bad name; 409 `INVALID_STATE` when the name is taken.
    package func create(name: String) async throws -> String {
        guard Self.isValidName(name) else {
            throw AuthError.invalidRequest("A service key's name is 1 to 64 letters, digits, `-`, `_` or `.`.", field: "name")
        }
        let body = Base64URL.encode(SecureRandom.bytes(32))
        let secret = Self.prefix + body
        let hash = Hex.encode(SHA256.hash(secret))
        let now = clock.now()
        let payload: [String: JSONValue] = ["prefix": .string(String(body.prefix(8))), "hash": .string(hash)]
        try await store.write([.code(purpose: Self.byName, key: name), .code(purpose: Self.byHash, key: hash)]) { state in
            guard state.code(purpose: Self.byName, key: name) == nil else { throw AuthError.invalidState("A service key named \(name) exists.") }
            state.put(CodeRecord(purpose: Self.byName, key: name, digest: "", sentAt: now, expiresAt: SessionRecord.neverExpires, payload: payload))
            state.put(
                CodeRecord(purpose: Self.byHash, key: hash, digest: "", sentAt: now, expiresAt: SessionRecord.neverExpires, payload: ["name": .string(name)]))
        }
        return secret
    }

    /// Every key, by name.
    package func list() async throws -> [Key] {
        try await store.read([.codesOfPurpose(Self.byName)]) { state in
            state.codes(purpose: Self.byName).map { record in
                var prefix = ""
                if case .string(let p) = record.payload?["prefix"] { prefix = p }
                return Key(name: record.key, prefix: prefix, createdAt: record.sentAt)
            }.sorted { $0.name < $1.name }
        }
    }

    /// Revokes the key named `name`.
    /// - Throws: 404 `NOT_FOUND` when there is none.
    package func revoke(name: String) async throws {
        guard Self.isValidName(name) else { throw AuthError.notFound("No service key named that.") }
        let record = try await store.read([.code(purpose: Self.byName, key: name)]) { $0.code(purpose: Self.byName, key: name) }
        guard let record, case .string(let hash) = record.payload?["hash"] else { throw AuthError.notFound("No service key named \(name).") }
        try await store.write([.code(purpose: Self.byName, key: name), .code(purpose: Self.byHash, key: hash)]) { state in
            state.deleteCode(id: CodeRecord.id(purpose: Self.byName, key: name))
            state.deleteCode(id: CodeRecord.id(purpose: Self.byHash, key: hash))
        }
    }

    /// The name of the key `secret` is, or nil when it is none (revoked, unknown or malformed).
    package func verify(_ secret: String) async throws -> String? {
        guard secret.hasPrefix(Self.prefix), secret.utf8.count <= 128 else { return nil }
        // Found by its hash: the lookup compares digests, never the secret.
        let hash = Hex.encode(SHA256.hash(secret))
        let record = try await store.read([.code(purpose: Self.byHash, key: hash)]) { $0.code(purpose: Self.byHash, key: hash) }
        guard let record, case .string(let name) = record.payload?["name"] else { return nil }
        return name
    }
}
