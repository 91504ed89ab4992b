import AuthKernel
import AuthdCore
import Crypto
import CryptoExtras
import Foundation
import Logging

/// The OpenID Provider's RSA-2048 key: made on first use and kept with the server's keys (0600 in
/// `DATA/keys/`, or sealed in the database, so every instance signs with the same one).
struct RSASigningKey: RSASigning {
    let key: _RSA.Signing.PrivateKey
    let kid: String
    let jwk: [String: String]

    static let blobName = "oidc-rsa"

    static func load(from keys: any ServerKeys, logger: Logger) async throws -> RSASigningKey {
        let der = try await keys.loadOrCreateBlob(named: blobName, logger: logger) {
            Array(try _RSA.Signing.PrivateKey(keySize: .bits2048).derRepresentation)
        }
        return try RSASigningKey(der: der)
    }

    init(der: [UInt8]) throws {
        key = try _RSA.Signing.PrivateKey(derRepresentation: der)
        let primitives = try key.publicKey.getKeyPrimitives()
        let n = Base64URL.encode(Array(primitives.modulus)), e = Base64URL.encode(Array(primitives.publicExponent))
        // RFC 7638's thumbprint: the key's id says which key it is.
        let thumbprint = #"{"e":"\#(e)","kty":"RSA","n":"\#(n)"}"#
        kid = Base64URL.encode(Array(AuthKernel.SHA256.hash(thumbprint)))
        jwk = ["kty": "RSA", "n": n, "e": e, "alg": "RS256", "use": "sig", "kid": kid]
    }

    func sign(_ input: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: Crypto.SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation)
    }

    func verify(_ signature: [UInt8], _ input: [UInt8]) -> Bool {
        key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: Crypto.SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
    }
}
