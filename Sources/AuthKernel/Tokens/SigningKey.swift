package import Foundation

/// An Ed25519 signing key with its JOSE key id.
package struct SigningKey: Sendable {
    /// The key pair.
    package let keyPair: Ed25519KeyPair
    /// RFC 7638 JWK thumbprint of the public key (base64url SHA-256), used as `kid`.
    package let kid: String
    /// When the key was created.
    package let createdAt: Date
    /// When it stopped signing; it still verifies until every token it signed has expired.
    package var retiredAt: Date?

    /// Wraps a key pair.
    package init(keyPair: Ed25519KeyPair, createdAt: Date, retiredAt: Date? = nil) {
        self.keyPair = keyPair
        self.createdAt = createdAt
        self.retiredAt = retiredAt
        self.kid = Self.thumbprint(publicKey: keyPair.publicKey)
    }

    /// RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order, no whitespace.
    package static func thumbprint(publicKey: [UInt8]) -> String {
        let canonical = #"{"crv":"Ed25519","kty":"OKP","x":"\#(Base64URL.encode(publicKey))"}"#
        return Base64URL.encode(SHA256.hash(canonical))
    }

    /// The public JWK.
    package var jwk: [String: String] {
        ["kty": "OKP", "crv": "Ed25519", "x": Base64URL.encode(keyPair.publicKey), "kid": kid, "alg": "EdDSA", "use": "sig"]
    }

    /// The file form: the seed is the secret.
    struct File: Codable {
        var kid: String
        var seed: String
        var createdAt: Date
        var retiredAt: Date?
        enum CodingKeys: String, CodingKey { case kid, seed, createdAt = "created_at", retiredAt = "retired_at" }
    }
}
