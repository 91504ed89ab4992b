import AuthdCore
import AuthdServer
import AppleProvider
import AuthKernel
import AuthKernelTesting
import Foundation
import Synchronization
import HTTPTypes
import JWTKit
import Testing

struct AppleSignInTests {
    func signIn(_ client: HarnessClient, _ body: [String: Any], bearer: String? = nil) async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/apple", json: body, bearer: bearer)
    }

    @Test func aGenuineTokenSignsIn() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        try await t.h.test { client async throws in
            let r = try await signIn(client, ["identity_token": try await t.token(), "full_name": ["given_name": "Ada", "family_name": "Lovelace"]])
            #expect(r.status == .ok)
            let s = try r.decode(SessionResponse.self)
            #expect(s.user.authProviders == ["apple"] && s.user.email == "apple@example.com" && s.user.emailVerified)
            #expect(s.user.displayName == "Ada Lovelace")
            // Apple sends the name only once; a later one is ignored. camelCase works too.
            let again = try await signIn(client, ["identityToken": try await t.token(), "fullName": ["givenName": "Someone", "familyName": "Else"]])
            let user = try again.decode(SessionResponse.self).user
            #expect(user.id == s.user.id && user.displayName == "Ada Lovelace")
            // The other issuer Apple has used is accepted.
            #expect(try await signIn(client, ["identity_token": try await t.token(["iss": .string("https://account.apple.com")])]).status == .ok)
        }
    }

    /// Contract §17: under a closed sign-up a token that would make an account is 403
    /// `SIGNUP_CLOSED` and makes nothing; the invited address signs up.
    @Test func aClosedSignUpRefusesANewAccount() async throws {
        let t = try await AppleTest.make(signup: #"{"mode":"invite"}"#)
        defer { t.apple.stop() }
        try await t.h.test { client async throws in
            let refused = try await signIn(client, ["identity_token": try await t.token()])
            #expect(refused.status == .forbidden && refused.errorCode == "SIGNUP_CLOSED")
            #expect(try await t.h.kernel.users.user(email: "apple@example.com") == nil)
            _ = try await t.h.kernel.invitations.invite(email: "apple@example.com", groups: ["family"], displayName: nil, by: "test", vouched: false)
            let invited = try await signIn(client, ["identity_token": try await t.token()])
            let email = try invited.decode(SessionResponse.self).user.email
            #expect(invited.status == .ok && email == "apple@example.com")
            #expect(try await t.h.kernel.users.user(email: "apple@example.com")?.groups == ["family"])
        }
    }

    @Test func aNameTooLongIsRefusedBeforeAnyoneIsCreated() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        try await t.h.test { client async throws in
            let long = try await signIn(client, ["identity_token": try await t.token(), "full_name": ["given_name": String(repeating: "a", count: 60), "family_name": String(repeating: "b", count: 60)]])
            #expect(long.status == .badRequest && long.errorCode == "INVALID_REQUEST")
            #expect(try await t.h.kernel.users.user(email: "apple@example.com") == nil)
            #expect(try await signIn(client, ["identity_token": try await t.token()]).status == .ok)
            #expect(try await t.h.kernel.users.user(email: "apple@example.com") != nil)
        }
    }

    @Test func everyRejectionIsTheSame401AndTheLogSaysWhy() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        let now = Int(t.h.clock.now().timeIntervalSince1970)
        let stranger = try AppleSigningKey(kid: "apple-key-1")
        let nonce = "raw-nonce-123"
        let cases: [(reason: String, token: String, nonce: String?)] = [
            ("bad signature", try await stranger.sign(t.claims()), nil),
            ("issuer not accepted", try await t.token(["iss": .string("https://evil.example")]), nil),
            ("audience not accepted", try await t.token(["aud": .string("com.other.app")]), nil),
            ("expired", try await t.token(["exp": .number(Double(now - 61))]), nil),
            ("issued in the future", try await t.token(["iat": .number(Double(now + 61))]), nil),
            ("empty or overlong subject", try await t.token(["sub": .string("")]), nil),
            ("empty or overlong subject", try await t.token(["sub": .string(String(repeating: "s", count: 256))]), nil),
            ("the token has a nonce but the request has none", try await t.token(["nonce": .string(AppleTest.hexSHA256(nonce))]), nil),
            ("nonce does not match", try await t.token(["nonce": .string(AppleTest.hexSHA256(nonce))]), "other"),
            ("the request has a nonce but the token has none", try await t.token(), nonce),
            ("algorithm RS384 is not RS256", try await t.key.sign(t.claims(), digest: .sha384), nil),
            ("algorithm none is not RS256", Self.unsigned(alg: "none", kid: "apple-key-1", claims: t.claims()), nil),
            ("algorithm HS256 is not RS256", Self.unsigned(alg: "HS256", kid: "apple-key-1", claims: t.claims()), nil),
            ("not a JWT", "garbage", nil),
        ]
        try await t.h.test { client async throws in
            for (reason, token, requestNonce) in cases {
                var body: [String: Any] = ["identity_token": token]
                body["nonce"] = requestNonce
                let r = try await signIn(client, body)
                #expect(r.status == .unauthorized && r.errorCode == "INVALID_APPLE_TOKEN", "\(reason)")
                #expect((r.json["error"] as? [String: Any])?["message"] as? String == "The Apple sign-in could not be verified. Try again.")
                #expect(t.h.logs.contains(reason), "log lacks \(reason)")
            }
            // Within the skew, and with the right nonce: fine.
            #expect(try await signIn(client, ["identity_token": try await t.token(["exp": .number(Double(now - 59)), "iat": .number(Double(now + 59))])]).status == .ok)
            #expect(try await signIn(client, ["identity_token": try await t.token(["nonce": .string(AppleTest.hexSHA256(nonce))]), "nonce": nonce]).status == .ok)
            #expect(try await signIn(client, [:]).errorCode == "INVALID_REQUEST")
        }
    }

    static func unsigned(alg: String, kid: String, claims: [String: JSONValue]) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"\#(alg)","kid":"\#(kid)"}"#.utf8))
        let payload = Base64URL.encode(try! JSONEncoder().encode(claims))
        return header + "." + payload + "." + Base64URL.encode(Array("sig".utf8))
    }

    @Test(arguments: [(JSONValue.bool(true), true), (.string("true"), true), (.bool(false), false), (.string("false"), false)])
    func emailVerifiedAsBooleanOrString(_ value: JSONValue, _ verified: Bool) async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        try await t.h.test { client async throws in
            let r = try await signIn(client, ["identity_token": try await t.token(["email_verified": value, "is_private_email": .string("true"), "email": .string("x@privaterelay.appleid.com")])])
            let user = try r.decode(SessionResponse.self).user
            #expect(user.emailVerified == verified && user.email == "x@privaterelay.appleid.com")
        }
    }

    @Test func linksByVerifiedEmailOnlyWhenBothSidesAreVerified() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        let verifiedOwner = try await t.h.signIn("owner", email: "shared@example.com")
        let squatter = try await t.h.kernel.users.signIn(.init(identity: Identity(provider: "test", subject: "squat"), email: "squat@example.com", emailVerified: false), linkingTo: nil)
        try await t.h.test { client async throws in
            let linked = try await signIn(client, ["identity_token": try await t.token(["email": .string("Shared@Example.com")])]).decode(SessionResponse.self)
            #expect(linked.user.id == verifiedOwner.user.id && linked.user.authProviders == ["test", "apple"])

            // Apple unverified: a new user, without the address someone else holds.
            let unverified = try await signIn(client, ["identity_token": try await t.token(["sub": .string("other.sub"), "email": .string("shared@example.com"), "email_verified": .bool(false)])]).decode(SessionResponse.self)
            #expect(unverified.user.id != verifiedOwner.user.id && unverified.user.email == nil)

            // The holder unverified: no link; Apple's verified claim takes the address.
            let third = try await signIn(client, ["identity_token": try await t.token(["sub": .string("third.sub"), "email": .string("squat@example.com")])]).decode(SessionResponse.self)
            #expect(third.user.id != squatter.id.lowercased && third.user.email == "squat@example.com")
            #expect(try await t.h.kernel.users.user(id: squatter.id)?.email == nil)
        }
    }

    @Test func aBearerLinksTheAppleIdentityOr409() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        let anonymous = try await t.h.kernel.sessions.startSession(try await t.h.kernel.users.createAnonymous(), amr: ["anonymous"], device: .none)
        let other = try await t.h.signIn("someone", email: "someone@example.com")
        try await t.h.test { client async throws in
            let linked = try await signIn(client, ["identity_token": try await t.token(["email": .null])], bearer: anonymous.accessToken)
            let user = try linked.decode(SessionResponse.self).user
            #expect(user.id == anonymous.user.id && !user.isAnonymous && user.authProviders == ["apple"])
            let clash = try await signIn(client, ["identity_token": try await t.token(["email": .null])], bearer: other.accessToken)
            #expect(clash.status == .conflict && clash.errorCode == "IDENTITY_IN_USE")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: other.accessToken).json["auth_providers"] as? [String] == ["test"])
        }
    }

    @Test func startingWithoutAudiencesIsAConfigurationError() async throws {
        await #expect(throws: ConfigError.self) {
            _ = try await TestHarness.make(providers: [AppleProvider.self], config: #"{"providers":["apple"]}"#)
        }
        await #expect(throws: ConfigError.self) {
            _ = try await TestHarness.make(providers: [AppleProvider.self], config: #"{"providers":["apple"],"apple":{"audiences":["a"],"team_id":"T"}}"#)
        }
        // Not listed, not started: no audiences needed.
        let h = try await TestHarness.make(providers: [AppleProvider.self], config: "{}")
        #expect(h.kernel.config.providers.isEmpty)
        await h.server.close()
    }
}
