import AuthKernel
import AuthdCore
import Crypto
import CryptoExtras
import Foundation
import Logging
import Synchronization

/// The OpenID Provider's RSA-2048 keys: made on first use and kept with the server's keys (0600 in
/// `DATA/keys/`, or sealed in the database, so every instance signs with the same one). The
/// signing key is the blob `oidc-rsa`; the one a rotation retired is `oidc-rsa-previous`.
final class RSASigningKeys: RSASigning {
    struct Key: Sendable {
        let key: _RSA.Signing.PrivateKey
        let kid: String
        let jwk: [String: String]

        init(der: [UInt8]) throws {
            key = try _RSA.Signing.PrivateKey(derRepresentation: der)
            let primitives = try key.publicKey.getKeyPrimitives()
            let n = Base64URL.encode(Array(primitives.modulus)), e = Base64URL.encode(Array(primitives.publicExponent))
            // RFC 7638's thumbprint: the key's id says which key it is.
            let thumbprint = #"{"e":"\#(e)","kty":"RSA","n":"\#(n)"}"#
            kid = Base64URL.encode(Array(AuthKernel.SHA256.hash(thumbprint)))
            jwk = ["kty": "RSA", "n": n, "e": e, "alg": "RS256", "use": "sig", "kid": kid]
        }

        func verify(_ signature: [UInt8], _ input: [UInt8]) -> Bool {
            key.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: Crypto.SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        }
    }

    static let blobName = "oidc-rsa", previousBlobName = "oidc-rsa-previous"
    let keys: any ServerKeys
    let logger: Logger
    private let state: Mutex<(active: Key, previous: Key?)>

    static func load(from keys: any ServerKeys, logger: Logger) async throws -> RSASigningKeys {
        try RSASigningKeys(keys: keys, logger: logger, loaded: try await read(keys, logger: logger))
    }

    private init(keys: any ServerKeys, logger: Logger, loaded: (active: Key, previous: Key?)) throws {
        (self.keys, self.logger) = (keys, logger)
        state = Mutex(loaded)
    }

    private static func read(_ keys: any ServerKeys, logger: Logger) async throws -> (active: Key, previous: Key?) {
        let der = try await keys.loadOrCreateBlob(named: blobName, logger: logger) { try newKey() }
        // An empty blob is "none yet".
        let previous = try await keys.loadOrCreateBlob(named: previousBlobName, logger: logger) { [] }
        return (try Key(der: der), previous.isEmpty ? nil : try Key(der: previous))
    }

    static func newKey() throws -> [UInt8] { Array(try _RSA.Signing.PrivateKey(keySize: .bits2048).derRepresentation) }

    var kid: String { state.withLock { $0.active.kid } }

    var jwks: [[String: String]] {
        state.withLock { s in [s.active.jwk] + (s.previous.map { [$0.jwk] } ?? []) }
    }

    func sign(_ input: [UInt8], kid: String) throws -> [UInt8] {
        guard let key = self.key(kid) else { throw AuthError.unavailable }
        return Array(try key.key.signature(for: Crypto.SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation)
    }

    func verify(kid: String, _ signature: [UInt8], _ input: [UInt8]) -> Bool {
        key(kid)?.verify(signature, input) ?? false
    }

    private func key(_ kid: String) -> Key? {
        state.withLock { s in s.active.kid == kid ? s.active : s.previous?.kid == kid ? s.previous : nil }
    }

    func rotate() async throws -> (active: String, retired: String) {
        let fresh = try Self.newKey(), current = state.withLock { $0.active }
        // The retiring key is saved as the previous one first: a crash in between leaves it twice, never lost.
        try await keys.replaceBlob(named: Self.previousBlobName, with: Array(current.key.derRepresentation), logger: logger)
        try await keys.replaceBlob(named: Self.blobName, with: fresh, logger: logger)
        let active = try Key(der: fresh)
        state.withLock { $0 = (active, current) }
        return (active.kid, current.kid)
    }

    func reload() async throws -> Bool {
        let loaded = try await Self.read(keys, logger: logger)
        return state.withLock { s in
            guard s.active.kid != loaded.active.kid || s.previous?.kid != loaded.previous?.kid else { return false }
            s = loaded
            return true
        }
    }
}

// It holds the RSA private key: a log line or a `dump` shows its name only (contract §17).
extension RSASigningKeys: RedactedDescription {}
