@testable import AuthStorage
@testable import AuthKernel
import Foundation
import Testing

struct AccessTokenTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let key = SigningKey(keyPair: Ed25519KeyPair(), createdAt: Date(timeIntervalSince1970: 1_700_000_000))
    var ring: SigningKeyRing { SigningKeyRing(keys: [key], accessTTL: 3600) }
    var verifier: AccessTokenVerifier { AccessTokenVerifier(keyRing: ring, issuer: "http://a", audience: "authd", clockSkew: 30) }

    func claims(iat: Int? = nil, exp: Int? = nil, aud: String = "authd", iss: String = "http://a") -> AccessTokenClaims {
        let t = iat ?? Int(now.timeIntervalSince1970)
        return AccessTokenClaims(iss: iss, aud: aud, sub: UUID().lowercased, sid: UUID().lowercased, iat: t, exp: exp ?? t + 3600, jti: "j", amr: ["email"], isAnonymous: false)
    }

    /// A token with any header and payload, signed by `signer` (default: the ring's key).
    func forge(header: String, payload: AccessTokenClaims, signer: Ed25519KeyPair? = nil) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(try JSONEncoder().encode(payload))
        return input + "." + Base64URL.encode((signer ?? key.keyPair).sign(Array(input.utf8)))
    }

    var goodHeader: String { #"{"alg":"EdDSA","typ":"at+jwt","kid":"\#(key.kid)"}"# }

    @Test func issuesAndVerifies() throws {
        let c = claims()
        let token = try AccessTokenIssuer(keyRing: ring).sign(c)
        let header = String(decoding: Base64URL.decode(token.split(separator: ".")[0])!, as: UTF8.self)
        #expect(header == #"{"alg":"EdDSA","kid":"\#(key.kid)","typ":"at+jwt"}"#)
        #expect(try verifier.verify(token, now: now) == c)
    }

    @Test func acceptsFullySpecifiedEd25519Alg() throws {
        let token = try forge(header: #"{"alg":"Ed25519","typ":"at+jwt","kid":"\#(key.kid)"}"#, payload: claims())
        #expect(throws: Never.self) { try verifier.verify(token, now: now) }
    }

    @Test func rejectsAlgNone() throws {
        let input = Base64URL.encode(Array(#"{"alg":"none","typ":"at+jwt","kid":"\#(key.kid)"}"#.utf8)) + "." + Base64URL.encode(try JSONEncoder().encode(claims()))
        #expect(throws: AccessTokenVerifier.Rejection.unsupportedAlgorithm("none")) { try verifier.verify(input + ".", now: now) }
    }

    @Test func rejectsHS256SignedWithThePublicKey() throws {
        // The classic confusion attack: HMAC keyed with the public key the server publishes.
        let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"at+jwt","kid":"\#(key.kid)"}"#.utf8)) + "." + Base64URL.encode(try JSONEncoder().encode(claims()))
        let token = input + "." + Base64URL.encode(SHA256.hmac(key: key.keyPair.publicKey, message: Array(input.utf8)))
        #expect(throws: AccessTokenVerifier.Rejection.unsupportedAlgorithm("HS256")) { try verifier.verify(token, now: now) }
    }

    @Test func rejectsUnknownKid() throws {
        let token = try forge(header: #"{"alg":"EdDSA","typ":"at+jwt","kid":"nope"}"#, payload: claims())
        #expect(throws: AccessTokenVerifier.Rejection.unknownKey) { try verifier.verify(token, now: now) }
        let noKid = try forge(header: #"{"alg":"EdDSA","typ":"at+jwt"}"#, payload: claims())
        #expect(throws: AccessTokenVerifier.Rejection.unknownKey) { try verifier.verify(noKid, now: now) }
    }

    @Test func rejectsAnotherKeyUnderOurKid() throws {
        let token = try forge(header: goodHeader, payload: claims(), signer: Ed25519KeyPair())
        #expect(throws: AccessTokenVerifier.Rejection.badSignature) { try verifier.verify(token, now: now) }
    }

    @Test func rejectsTamperedPayload() throws {
        let token = try AccessTokenIssuer(keyRing: ring).sign(claims())
        let parts = token.split(separator: ".").map(String.init)
        var other = claims()
        other.sub = UUID().lowercased
        let tampered = parts[0] + "." + Base64URL.encode(try JSONEncoder().encode(other)) + "." + parts[2]
        #expect(throws: AccessTokenVerifier.Rejection.badSignature) { try verifier.verify(tampered, now: now) }
    }

    @Test func rejectsTamperedSignature() throws {
        let token = try AccessTokenIssuer(keyRing: ring).sign(claims())
        var parts = token.split(separator: ".").map(String.init)
        var sig = Base64URL.decode(parts[2])!
        sig[0] ^= 0x01
        parts[2] = Base64URL.encode(sig)
        #expect(throws: AccessTokenVerifier.Rejection.badSignature) { try verifier.verify(parts.joined(separator: "."), now: now) }
    }

    @Test func rejectsWrongAudienceAndIssuer() throws {
        let issuer = AccessTokenIssuer(keyRing: ring)
        #expect(throws: AccessTokenVerifier.Rejection.wrongAudience) { try verifier.verify(try issuer.sign(claims(aud: "other")), now: now) }
        #expect(throws: AccessTokenVerifier.Rejection.wrongIssuer) { try verifier.verify(try issuer.sign(claims(iss: "http://evil")), now: now) }
    }

    @Test func rejectsExpiredAllowingSkew() throws {
        let t = Int(now.timeIntervalSince1970)
        let issuer = AccessTokenIssuer(keyRing: ring)
        #expect(throws: AccessTokenVerifier.Rejection.expired) { try verifier.verify(try issuer.sign(claims(iat: t - 4000, exp: t - 31)), now: now) }
        #expect(throws: Never.self) { try verifier.verify(try issuer.sign(claims(iat: t - 4000, exp: t - 10)), now: now) }
    }

    @Test func rejectsNotYetValid() throws {
        let t = Int(now.timeIntervalSince1970)
        #expect(throws: AccessTokenVerifier.Rejection.notYetValid) {
            try verifier.verify(try AccessTokenIssuer(keyRing: ring).sign(claims(iat: t + 120)), now: now)
        }
        var c = claims()
        c.nbf = t + 120
        #expect(throws: AccessTokenVerifier.Rejection.notYetValid) { try verifier.verify(try forge(header: goodHeader, payload: c), now: now) }
    }

    @Test func rejectsWrongTypeCritAndGarbage() throws {
        #expect(throws: AccessTokenVerifier.Rejection.wrongType) {
            try verifier.verify(try forge(header: #"{"alg":"EdDSA","typ":"JWT","kid":"\#(key.kid)"}"#, payload: claims()), now: now)
        }
        #expect(throws: AccessTokenVerifier.Rejection.malformed) {
            try verifier.verify(try forge(header: #"{"alg":"EdDSA","typ":"at+jwt","kid":"\#(key.kid)","crit":["exp"]}"#, payload: claims()), now: now)
        }
        for garbage in ["", "a.b", "a.b.c.d", "!!.!!.!!", String(repeating: "a", count: 9000)] {
            #expect(throws: AccessTokenVerifier.Rejection.malformed) { try verifier.verify(garbage, now: now) }
        }
    }

    @Test func retiredKeyVerifiesUntilItsTokensExpireAndJWKSFollows() throws {
        var old = SigningKey(keyPair: Ed25519KeyPair(), createdAt: Date(timeIntervalSince1970: 1_600_000_000))
        let token = try AccessTokenIssuer(keyRing: SigningKeyRing(keys: [old], accessTTL: 3600)).sign(claims())
        old.retiredAt = now
        let ring = SigningKeyRing(keys: [old, key], accessTTL: 3600)
        #expect(ring.active.kid == key.kid)
        let v = AccessTokenVerifier(keyRing: ring, issuer: "http://a", audience: "authd", clockSkew: 30)
        #expect(throws: Never.self) { try v.verify(token, now: now) }
        #expect(ring.jwks(now: now)["keys"]?.count == 2)
        let later = now.addingTimeInterval(3601)
        #expect(ring.jwks(now: later)["keys"]?.map { $0["kid"] } == [key.kid])
        #expect(throws: AccessTokenVerifier.Rejection.unknownKey) { try v.verify(token, now: later) }
    }

    @Test func kidIsTheRFC7638Thumbprint() {
        // RFC 8037 appendix A.3: thumbprint of the RFC 8032 test 1 public key.
        let pk = Hex.decode("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")!
        #expect(SigningKey.thumbprint(publicKey: pk) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
    }
}

struct AccessTokenClaimsJSONTests {
    @Test func theHandWrittenClaimsAreWhatJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var claims = AccessTokenClaims(
            iss: "https://auth.example.com/x", aud: "app \"q\"", sub: UUID().uuidString.lowercased(), sid: UUID().uuidString.lowercased(),
            iat: 1_800_000_000, exp: 1_800_003_600, jti: "j-é\\\n", amr: ["email", "pin"], isAnonymous: true)
        #expect(claims.json() == Array(try encoder.encode(claims)))
        claims.nbf = 1_799_999_999
        claims.aud = .init(["a", "b"])
        claims.amr = []
        claims.isAnonymous = false
        #expect(claims.json() == Array(try encoder.encode(claims)))
    }
}
