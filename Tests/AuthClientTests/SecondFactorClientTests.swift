import AuthClient
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerProcessSupport
import Testing

/// The client's second factors against a real `authd serve`: TOTP enrolment, the challenge step
/// with each answer, and passkey ceremonies as JSON in and out (what an app hands to and gets from
/// `ASAuthorization`, made here by a small software authenticator).
@Suite(.serialized)
struct SecondFactorClientTests {
    static let config = #"""
        {"mail":{"transport":"outbox"},"providers":["email","password","totp","passkey"],"email":{"resend_interval":1},
         "passkeys":{"rp_id":"example.org","origins":["https://example.org"]}}
        """#

    let fixture: AuthClientTests.Fixture

    init() throws {
        fixture = try AuthClientTests.Fixture(config: Self.config)
    }

    /// RFC 6238 with swift-crypto, as an authenticator app computes it.
    static func totp(_ secretBase32: String, at date: Date = Date()) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bytes: [UInt8] = [], buffer = 0, bits = 0
        for c in secretBase32 {
            buffer = buffer << 5 | alphabet.firstIndex(of: c)!
            bits += 5
            if bits >= 8 { bytes.append(UInt8(buffer >> (bits - 8) & 0xff)); bits -= 8 }
        }
        let counter = withUnsafeBytes(of: UInt64(date.timeIntervalSince1970 / 30).bigEndian) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: SymmetricKey(data: bytes)))
        let o = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[o] & 0x7f) << 24 | UInt32(mac[o + 1]) << 16 | UInt32(mac[o + 2]) << 8 | UInt32(mac[o + 3])) % 1_000_000
        return String(format: "%06d", value)
    }

    @Test func totpEnrolmentAndEveryAnswerToTheChallenge() async throws {
        let app = fixture.client()
        _ = try await fixture.signInByEmail(app, "totp@example.com")
        let enrolment = try await app.enrollTOTP()
        #expect(enrolment.otpauthURI.hasPrefix("otpauth://totp/") && enrolment.otpauthURI.contains("secret=\(enrolment.secret)"))
        let codes = try await app.confirmTOTP(code: Self.totp(enrolment.secret))
        #expect(codes.count == 10)
        let factors = try await app.secondFactors()
        #expect(factors.factors.map(\.type) == ["totp"] && factors.recoveryCodesLeft == 10)

        let other = fixture.client()
        var challenge: SecondFactorChallenge?
        do {
            _ = try await fixture.signInByEmail(other, "totp@example.com")
            Issue.record("signed in without the second factor")
        } catch AuthClientError.secondFactorRequired(let c) {
            challenge = c
        }
        let c = try #require(challenge)
        #expect(c.factors == ["totp", "recovery_code"] && c.expiresIn == 300 && c.passkeyOptions == nil)
        await #expect(throws: AuthClientError.invalidCode(attemptsRemaining: 4)) { try await other.completeSignIn(c, with: .totp("000000")) }
        let session = try await other.completeSignIn(c, with: .totp(Self.totp(enrolment.secret, at: Date().addingTimeInterval(30))))
        #expect(session.user.email == "totp@example.com")
        #expect(await other.isSignedIn)
        await #expect(throws: AuthClientError.invalidChallenge) { try await other.completeSignIn(c, with: .recoveryCode(codes[0])) }

        let third = fixture.client()
        do {
            _ = try await fixture.signInByEmail(third, "totp@example.com")
        } catch AuthClientError.secondFactorRequired(let again) {
            try await third.completeSignIn(again, with: .recoveryCode(codes[0]))
        }
        #expect(try await third.secondFactors().recoveryCodesLeft == 9)
        let fresh = try await third.newRecoveryCodes()
        #expect(fresh.count == 10 && Set(fresh).isDisjoint(with: codes))
        try await third.disableTOTP()
        #expect(try await third.secondFactors().factors.isEmpty)
    }

    @Test func passkeyCeremoniesAsJSON() async throws {
        let app = fixture.client()
        _ = try await fixture.signInByEmail(app, "passkey@example.com")
        let key = SoftPasskey()
        let creation = try JSONSerialization.jsonObject(with: try await app.passkeyRegistrationOptions()) as? [String: Any] ?? [:]
        let added = try await app.registerPasskey(credential: try key.registration(creation), name: "This iPhone")
        #expect(added.id == key.id && added.name == "This iPhone")
        #expect(try await app.passkeys().map(\.name) == ["This iPhone"])

        let phone = fixture.client()
        let request = try JSONSerialization.jsonObject(with: try await phone.passkeySignInOptions()) as? [String: Any] ?? [:]
        let session = try await phone.signInWithPasskey(credential: try key.assertion(request), deviceName: "iPhone")
        #expect(session.user.email == "passkey@example.com")

        // Another way in now asks for the passkey, with the options to hand to the platform.
        let laptop = fixture.client()
        do {
            _ = try await fixture.signInByEmail(laptop, "passkey@example.com")
            Issue.record("signed in without the passkey")
        } catch AuthClientError.secondFactorRequired(let c) {
            #expect(c.factors == ["passkey"])
            let options = try JSONSerialization.jsonObject(with: try #require(c.passkeyOptions)) as? [String: Any] ?? [:]
            #expect((options["allowCredentials"] as? [[String: Any]])?.first?["id"] as? String == key.id)
            try await laptop.completeSignIn(c, with: .passkey(try key.assertion(options)))
        }
        #expect(await laptop.isSignedIn)
        try await app.deletePasskey(key.id)
        #expect(try await app.passkeys().isEmpty)
        await #expect(throws: AuthClientError.invalidCredentials) {
            let options = try JSONSerialization.jsonObject(with: try await phone.passkeySignInOptions()) as? [String: Any] ?? [:]
            try await phone.signInWithPasskey(credential: try key.assertion(options))
        }
    }
}

/// A P-256 passkey answering WebAuthn JSON, origin https://example.org.
final class SoftPasskey: @unchecked Sendable {
    let key = P256.Signing.PrivateKey()
    let credentialID = (0..<32).map { _ in UInt8.random(in: 0...255) }
    var count: UInt32 = 0
    var userHandle = ""

    static func b64(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    var id: String { Self.b64(credentialID) }

    func authData(_ rpID: String, attested: Bool) -> [UInt8] {
        var data = Array(SHA256.hash(data: Array(rpID.utf8))) + [attested ? 0x5d : 0x1d]
        data += withUnsafeBytes(of: count.bigEndian) { Array($0) }
        if attested {
            let raw = Array(key.publicKey.rawRepresentation)
            let cose: [UInt8] = [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + raw.prefix(32) + [0x22, 0x58, 0x20] + raw.suffix(32)
            data += [UInt8](repeating: 0, count: 16) + [0, UInt8(credentialID.count)] + credentialID + cose
        }
        return data
    }

    func clientData(_ type: String, _ challenge: Any?) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge as? String ?? "")","origin":"https://example.org"}"#.utf8)
    }

    func registration(_ options: [String: Any]) throws -> Data {
        let rpID = (options["rp"] as? [String: Any])?["id"] as? String ?? ""
        userHandle = (options["user"] as? [String: Any])?["id"] as? String ?? ""
        let client = clientData("webauthn.create", options["challenge"])
        let data = authData(rpID, attested: true)
        let attestation: [UInt8] = [0xa3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8) + [0xa0]
            + [0x68] + Array("authData".utf8) + [0x59, UInt8(data.count >> 8), UInt8(data.count & 0xff)] + data
        let json: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key",
            "response": ["clientDataJSON": Self.b64(client), "attestationObject": Self.b64(attestation)],
        ]
        return try JSONSerialization.data(withJSONObject: json)
    }

    func assertion(_ options: [String: Any]) throws -> Data {
        count += 1
        let client = clientData("webauthn.get", options["challenge"])
        let data = authData(options["rpId"] as? String ?? "", attested: false)
        let signature = try key.signature(for: data + Array(SHA256.hash(data: client)))
        let json: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key",
            "response": [
                "clientDataJSON": Self.b64(client), "authenticatorData": Self.b64(data), "signature": Self.b64(signature.derRepresentation), "userHandle": userHandle,
            ],
        ]
        return try JSONSerialization.data(withJSONObject: json)
    }
}
