import AuthKernel
import Crypto
import Foundation

/// A software passkey for tests: a P-256 key, its credential id and counter, producing WebAuthn's
/// JSON responses as a browser would hand them to an app (RegistrationResponseJSON,
/// AuthenticationResponseJSON).
final class SoftAuthenticator: @unchecked Sendable {
    let key = P256.Signing.PrivateKey()
    let credentialID = SecureRandom.bytes(32)
    var signCount: UInt32
    var userHandle: String?

    init(signCount: UInt32 = 0) { self.signCount = signCount }

    var id: String { Base64URL.encode(credentialID) }

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let up = Flags(rawValue: 0x01)
        static let uv = Flags(rawValue: 0x04)
        static let be = Flags(rawValue: 0x08)
        static let bs = Flags(rawValue: 0x10)
        static let at = Flags(rawValue: 0x40)
        static let normal: Flags = [.up, .uv, .be, .bs]
    }

    func clientData(type: String, challenge: String, origin: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    func authenticatorData(rpID: String, flags: Flags, attested: Bool) -> [UInt8] {
        var data = SHA256.hash(Array(rpID.utf8)) + [flags.union(attested ? .at : []).rawValue]
        data += withUnsafeBytes(of: signCount.bigEndian) { Array($0) }
        if attested {
            data += [UInt8](repeating: 0, count: 16) + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID
            let raw = Array(key.publicKey.rawRepresentation)
            data += TestCBOR.encode([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Array(raw.prefix(32)))), (.int(-3), .bytes(Array(raw.suffix(32))))])
        }
        return data
    }

    /// RegistrationResponseJSON for creation `options` (as the server sent them).
    func register(_ options: [String: Any], origin: String = "https://example.org", flags: Flags = .normal, format: String = "none") throws -> [String: Any] {
        let challenge = options["challenge"] as? String ?? ""
        let rpID = (options["rp"] as? [String: Any])?["id"] as? String ?? ""
        userHandle = (options["user"] as? [String: Any])?["id"] as? String
        let client = clientData(type: "webauthn.create", challenge: challenge, origin: origin)
        let authData = authenticatorData(rpID: rpID, flags: flags, attested: true)
        var statement: [(TestCBOR, TestCBOR)] = []
        if format == "packed" {
            let signature = try key.signature(for: authData + SHA256.hash(client))
            statement = [(.text("alg"), .int(-7)), (.text("sig"), .bytes(Array(signature.derRepresentation)))]
        }
        let attestation = TestCBOR.encode([(.text("fmt"), .text(format)), (.text("attStmt"), .map(statement)), (.text("authData"), .bytes(authData))])
        return [
            "id": id, "rawId": id, "type": "public-key", "clientExtensionResults": [String: Any](), "authenticatorAttachment": "platform",
            "response": ["clientDataJSON": Base64URL.encode(client), "attestationObject": Base64URL.encode(attestation), "transports": ["internal"]],
        ]
    }

    /// AuthenticationResponseJSON for request `options`; the counter moves on by `step`.
    func assert(_ options: [String: Any], origin: String = "https://example.org", flags: Flags = .normal, step: UInt32 = 1) throws -> [String: Any] {
        signCount &+= step
        let challenge = options["challenge"] as? String ?? ""
        let rpID = options["rpId"] as? String ?? ""
        let client = clientData(type: "webauthn.get", challenge: challenge, origin: origin)
        let authData = authenticatorData(rpID: rpID, flags: flags, attested: false)
        let signature = try key.signature(for: authData + SHA256.hash(client))
        var response: [String: Any] = [
            "clientDataJSON": Base64URL.encode(client), "authenticatorData": Base64URL.encode(authData), "signature": Base64URL.encode(Array(signature.derRepresentation)),
        ]
        response["userHandle"] = userHandle
        return ["id": id, "rawId": id, "type": "public-key", "clientExtensionResults": [String: Any](), "response": response]
    }
}

/// Just enough of a CBOR encoder for the software authenticator.
indirect enum TestCBOR {
    case int(Int64)
    case bytes([UInt8])
    case text(String)
    case map([(TestCBOR, TestCBOR)])

    static func encode(_ pairs: [(TestCBOR, TestCBOR)]) -> [UInt8] { TestCBOR.map(pairs).encoded }

    var encoded: [UInt8] {
        func head(_ major: UInt8, _ n: UInt64) -> [UInt8] {
            switch n {
            case 0..<24: [major << 5 | UInt8(n)]
            case 24..<256: [major << 5 | 24, UInt8(n)]
            case 256..<65536: [major << 5 | 25, UInt8(n >> 8), UInt8(n & 0xff)]
            default: [major << 5 | 26] + withUnsafeBytes(of: UInt32(n).bigEndian) { Array($0) }
            }
        }
        switch self {
        case .int(let v): return v >= 0 ? head(0, UInt64(v)) : head(1, UInt64(-1 - v))
        case .bytes(let b): return head(2, UInt64(b.count)) + b
        case .text(let t): return head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .map(let pairs): return head(5, UInt64(pairs.count)) + pairs.flatMap { $0.0.encoded + $0.1.encoded }
        }
    }
}
