import AuthKernel

/// The OpenID Provider's RSA key (RS256, which many relying parties require): the full server
/// (`AuthdServer`) provides it with swift-crypto, the key kept with the server's other keys; the
/// core and the test kit, built without BoringSSL, sign ID tokens with EdDSA only.
package protocol RSASigning: Sendable {
    /// The key's id in the JWKS and in tokens' headers.
    var kid: String { get }
    /// The public key as a JWK: `kty` RSA, `n`, `e`, `alg` RS256, `use` sig, `kid`.
    var jwk: [String: String] { get }
    /// RSASSA-PKCS1-v1_5 with SHA-256 over `input`.
    func sign(_ input: [UInt8]) throws -> [UInt8]
    /// Whether `signature` is this key's over `input`.
    func verify(_ signature: [UInt8], _ input: [UInt8]) -> Bool
}
