import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import HummingbirdTesting
import InviteCodeProvider
import Testing

/// A provider written outside Sources/, against the public API only, registers and signs users in.
struct CustomProviderTests {
    @Test func aThirdPartyProviderSignsAUserIn() async throws {
        let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: #"{"invite":{"codes":["welcome-2026"]}}"#)
        try await h.test { client async throws in
            #expect(try await client.send(.get, "/api/v1/auth/providers").json["providers"] as? [String] == ["invite"])
            let r = try await client.send(.post, "/api/v1/auth/invite/sign-in", json: ["name": "Ada", "invite": "welcome-2026"])
            #expect(r.status == .ok)
            let session = try r.decode(SessionResponse.self)
            #expect(session.user.authProviders == ["invite"])
            #expect(session.user.displayName == "Ada")
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: session.accessToken)
            #expect(me.json["id"] as? String == session.user.id)
            let again = try await client.send(.post, "/api/v1/auth/invite/sign-in", json: ["name": "ada", "invite": "welcome-2026"])
            #expect(try again.decode(SessionResponse.self).user.id == session.user.id)
            let wrong = try await client.send(.post, "/api/v1/auth/invite/sign-in", json: ["name": "Ada", "invite": "nope"])
            #expect(wrong.errorCode == "INVALID_CREDENTIALS")
        }
    }

    @Test func itsConfigurationIsValidatedLikeTheKernels() async throws {
        await #expect(throws: ConfigError("invite.codes must list at least one invite code")) {
            _ = try await TestHarness.make(providers: [InviteCodeProvider.self], config: "{}")
        }
        await #expect(throws: ConfigError("unknown configuration key invite.cods")) {
            _ = try await TestHarness.make(providers: [InviteCodeProvider.self], config: #"{"invite":{"codes":["x"],"cods":1}}"#)
        }
    }
}
