import AuthKernel
import Crypto
import Foundation

/// A credential public key in COSE form (RFC 9053), as an authenticator hands it over: ES256
/// (P-256, checked with swift-crypto) or EdDSA (Ed25519, checked with libsodium). Nothing else is
/// accepted; registration options offer only these two.
struct COSEKey: Sendable, Equatable {
    enum Algorithm: Int64, Sendable {
        case es256 = -7
        case edDSA = -8
    }

    let algorithm: Algorithm
    /// ES256: the 64-byte x ‖ y; EdDSA: the 32-byte x.
    let key: [UInt8]

    /// Reads a COSE_Key map.
    init(_ cbor: CBOR) throws {
        guard case .map = cbor, let kty = cbor[int: 1]?.int, let alg = cbor[int: 3]?.int else {
            throw WebAuthnError("the credential public key is not a COSE key")
        }
        switch (kty, Algorithm(rawValue: alg)) {
        case (2, .es256?):
            guard cbor[int: -1]?.int == 1, let x = cbor[int: -2]?.bytes, let y = cbor[int: -3]?.bytes, x.count == 32, y.count == 32 else {
                throw WebAuthnError("the ES256 key is not a P-256 point")
            }
            guard (try? P256.Signing.PublicKey(rawRepresentation: x + y)) != nil else { throw WebAuthnError("the ES256 key is not on the curve") }
            self.algorithm = .es256
            self.key = x + y
        case (1, .edDSA?):
            guard cbor[int: -1]?.int == 6, let x = cbor[int: -2]?.bytes, x.count == 32 else { throw WebAuthnError("the EdDSA key is not an Ed25519 key") }
            self.algorithm = .edDSA
            self.key = x
        default:
            throw WebAuthnError("the credential uses an algorithm this server does not accept (ES256 and EdDSA only)")
        }
    }

    init(algorithm: Algorithm, key: [UInt8]) {
        self.algorithm = algorithm
        self.key = key
    }

    /// Whether `signature` signs `message` (ES256: an ASN.1 DER ECDSA signature over SHA-256 of the
    /// message; EdDSA: 64 bytes).
    func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        switch algorithm {
        case .es256:
            guard signature.count <= 80, let key = try? P256.Signing.PublicKey(rawRepresentation: self.key),
                let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: message)
        case .edDSA:
            return Ed25519.verify(signature: signature, message: message, publicKey: key)
        }
    }
}

/// Why a WebAuthn response was refused, for the log and the tests (clients get one answer).
struct WebAuthnError: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
