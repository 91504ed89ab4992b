import AuthKernel

/// The OpenID Provider's RSA keys (RS256, which many relying parties require): the full server
/// (`AuthdServer`) provides them with swift-crypto, kept with the server's other keys; the core and
/// the test kit, built without BoringSSL, sign ID tokens with EdDSA only. One key signs; after
/// `authd keys rotate` the key it replaced still verifies and stays in the JWKS until the next
/// rotation, so tokens it signed keep working until they expire.
package protocol RSASigning: Sendable {
    /// The signing key's id in the JWKS and in tokens' headers.
    var kid: String { get }
    /// The public keys as JWKs (`kty` RSA, `n`, `e`, `alg` RS256, `use` sig, `kid`), the signing one first.
    var jwks: [[String: String]] { get }
    /// RSASSA-PKCS1-v1_5 with SHA-256 over `input`, with the key named `kid` (the signing key as
    /// read before the header was written: a rotation in between signs with a key still published).
    func sign(_ input: [UInt8], kid: String) throws -> [UInt8]
    /// Whether `signature` over `input` is that of the key named `kid`.
    func verify(kid: String, _ signature: [UInt8], _ input: [UInt8]) -> Bool
    /// Makes a new signing key; returns its kid and the retired one's.
    func rotate() async throws -> (active: String, retired: String)
    /// Reads the keys again (another instance may have rotated them); true when they changed.
    func reload() async throws -> Bool
}
