@testable import AuthdCore
import AuthKernel
import AuthStorage
import AuthKernelTesting
import Foundation
import Testing

/// What an ID token and userinfo say about a person (contract §13): only a verified email unless
/// the client is registered `--unverified-email`, nothing null, and the app_metadata keys it names.
struct OpenIDClaimsTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func client(unverifiedEmail: Bool = false, claims: [String] = []) -> OpenIDClient {
        var c = OpenIDClient(id: "c1", name: "App", redirectURIs: ["https://app.example/cb"], secretHash: nil, createdAt: now)
        (c.unverifiedEmail, c.claims) = (unverifiedEmail, claims)
        return c
    }

    @Test func anUnverifiedEmailIsGivenOnlyToAClientRegisteredForIt() {
        let user = UserRecord(email: "una@example.com", emailVerified: false, createdAt: Self.now)
        let plain = OpenIDTokens.userClaims(user, scopes: ["openid", "email"], client: Self.client())
        #expect(plain["email"] == nil && plain["email_verified"] == nil)
        let told = OpenIDTokens.userClaims(user, scopes: ["openid", "email"], client: Self.client(unverifiedEmail: true))
        #expect(told["email"] == .string("una@example.com") && told["email_verified"] == .bool(false))
        let verified = UserRecord(email: "vic@example.com", emailVerified: true, createdAt: Self.now)
        #expect(OpenIDTokens.userClaims(verified, scopes: ["openid", "email"], client: Self.client())["email_verified"] == .bool(true))
        #expect(OpenIDTokens.userClaims(verified, scopes: ["openid"], client: Self.client())["email"] == nil, "no email scope, no email")
    }

    @Test func theLocaleIsAProfileClaimLeftOutWhenNotKnown() {
        var user = UserRecord(email: "lea@example.com", emailVerified: true, createdAt: Self.now)
        #expect(OpenIDTokens.userClaims(user, scopes: ["openid", "profile"], client: Self.client())["locale"] == nil)
        user.locale = "de-AT"
        #expect(OpenIDTokens.userClaims(user, scopes: ["openid", "profile"], client: Self.client())["locale"] == .string("de-AT"))
        #expect(OpenIDTokens.userClaims(user, scopes: ["openid", "email"], client: Self.client())["locale"] == nil, "profile only")
    }

    @Test func namedAppMetadataKeysBecomeClaimsAndNullsAreLeftOut() {
        var user = UserRecord(email: "gus@example.com", emailVerified: true, displayName: nil, username: "gus", createdAt: Self.now)
        user.appMetadata = ["groups": .array([.string("not-these")]), "plan": .null, "tier": .string("gold"), "internal": .string("x")]
        user.groups = ["admins"]
        let claims = OpenIDTokens.userClaims(user, scopes: ["openid", "profile"], client: Self.client(claims: ["groups", "plan", "tier"]))
        #expect(claims["groups"] == .array([.string("admins")]), "groups are the user's own field, never app_metadata's key")
        #expect(claims["plan"] == nil && claims["internal"] == nil && claims["tier"] == .string("gold"))
        #expect(claims["name"] == nil && claims["preferred_username"] == .string("gus"))
        // The scope `groups` gives them too, [] when none; without either, no claim.
        #expect(OpenIDTokens.userClaims(user, scopes: ["openid", "groups"], client: Self.client())["groups"] == .array([.string("admins")]))
        user.groups = []
        #expect(OpenIDTokens.userClaims(user, scopes: ["openid", "groups"], client: Self.client())["groups"] == .array([]))
        #expect(OpenIDTokens.userClaims(user, scopes: ["openid"], client: Self.client())["groups"] == nil)
    }
}

/// Which tokens of its own the OpenID Provider takes back: an ID token as a logout hint expired or
/// not, a client access token only while it lives (on the injected clock).
struct OpenIDTokenVerificationTests {
    @Test func aLogoutHintMayHaveExpiredButAnAccessTokenMayNot() async throws {
        let h = try await TestHarness.make()
        let tokens = OpenIDTokens(keyRing: h.server.keyRing, rsa: nil, issuer: IssuerName("https://auth.example.com"), clock: h.clock)
        let now = h.clock.now().timeIntervalSince1970
        let idClaims: [String: JSONValue] = [
            "iss": .string("https://auth.example.com"), "sub": .string("u"), "aud": .string("c1"), "sid": .string("s"), "exp": .number(now + 3600),
        ]
        let idToken = try tokens.sign(idClaims, typ: "JWT", alg: "EdDSA")
        let accessClaims: [String: JSONValue] = [
            "iss": .string("https://auth.example.com"), "sub": .string("u"), "aud": .string("c1"), "client_id": .string("c1"), "scope": .string("openid"),
            "sid": .string("s"), "iat": .number(now), "exp": .number(now + 3600),
        ]
        let access = try tokens.sign(accessClaims, typ: "at+jwt", alg: "Ed25519")
        #expect(tokens.verifiedIDToken(idToken)?["sid"] == .string("s"))
        #expect(tokens.verifiedAccessToken(access)?.clientID == "c1")
        h.clock.advance(by: 7200)
        #expect(tokens.verifiedIDToken(idToken) != nil, "a logout hint may have expired")
        #expect(tokens.verifiedAccessToken(access) == nil, "an access token may not, even once its signature was checked")
        // Neither passes for the other, nor with a foreign issuer or a changed byte.
        #expect(tokens.verifiedIDToken(access) == nil && tokens.verifiedAccessToken(idToken) == nil)
        let other = OpenIDTokens(keyRing: h.server.keyRing, rsa: nil, issuer: IssuerName("https://other.example.com"), clock: h.clock)
        #expect(other.verifiedIDToken(idToken) == nil)
        #expect(tokens.verifiedIDToken(String(idToken.dropLast()) + (idToken.last == "A" ? "B" : "A")) == nil)
    }
}
