import AuthStorage
/// Opaque refresh tokens: 32 random bytes (256 bits), base64url; stored only as their SHA-256.
package enum RefreshToken {
    /// A new token.
    package static func generate() -> String { Base64URL.encode(SecureRandom.bytes(32)) }

    /// The stored form: lower-case hex SHA-256 of the token's bytes.
    package static func hash(_ token: String) -> String { Hex.encode(SHA256.hash(token)) }
}
