@testable import AuthdCore
import AuthKernel
import AuthStorage
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

    @Test func namedAppMetadataKeysBecomeClaimsAndNullsAreLeftOut() {
        var user = UserRecord(email: "gus@example.com", emailVerified: true, displayName: nil, username: "gus", createdAt: Self.now)
        user.appMetadata = ["groups": .array([.string("admins")]), "plan": .null, "internal": .string("x")]
        let claims = OpenIDTokens.userClaims(user, scopes: ["openid", "profile"], client: Self.client(claims: ["groups", "plan"]))
        #expect(claims["groups"] == .array([.string("admins")]) && claims["plan"] == nil && claims["internal"] == nil)
        #expect(claims["name"] == nil && claims["preferred_username"] == .string("gus"))
    }
}
