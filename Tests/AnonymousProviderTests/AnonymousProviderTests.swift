import AnonymousProvider
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import PINProvider
import Testing

/// Anonymous sign-in and user names as a provider of their own, and as what `pin` brings along.
struct AnonymousProviderTests {
    static let providers: [any AuthProvider.Type] = [PINProvider.self, AnonymousProvider.self]

    func anonymous(_ client: HarnessClient) async throws -> SessionResponse {
        let r = try await client.send(.post, "/api/v1/auth/anonymous")
        #expect(r.status == .ok)
        return try r.decode(SessionResponse.self)
    }

    @Test func onItsOwnItSignsInAndNamesWithoutPINs() async throws {
        let h = try await TestHarness.make(providers: Self.providers, config: #"{"providers":["anonymous"]}"#)
        #expect(h.routes.filter { $0.contains("/pin") } == [])
        try await h.test { client async throws in
            let s = try await anonymous(client)
            #expect(s.user.isAnonymous && s.user.authProviders.isEmpty)
            let named = try await client.send(.put, "/api/v1/auth/username", json: ["username": "otto"], bearer: s.accessToken)
            #expect(named.status == .ok && named.json["username"] as? String == "otto")
            #expect(try await client.send(.get, "/api/v1/auth/providers").json["providers"] as? [String] == ["anonymous"])
            #expect(try await client.send(.put, "/api/v1/auth/pin", json: ["pin": "1234"], bearer: s.accessToken).status == .notFound)
        }
    }

    @Test func itsOwnSectionSetsIt() async throws {
        let h = try await TestHarness.make(
            providers: Self.providers, config: #"{"providers":["anonymous"],"anonymous":{"sign_ups_per_ip":{"limit":1,"window":60},"ttl":3600}}"#
        )
        try await h.test { client async throws in
            _ = try await anonymous(client)
            let r = try await client.send(.post, "/api/v1/auth/anonymous")
            #expect(r.status == .tooManyRequests && r.retryAfter == 60)
        }
        await #expect(throws: ConfigError.self) {
            try await TestHarness.make(providers: Self.providers, config: #"{"providers":["anonymous"],"anonymous":{"anonymous_ttl":60}}"#)
        }
    }

    /// A configuration that lists `pin` means what it meant before anonymous sign-in was a provider:
    /// the routes are there, set by `pin.anonymous_per_ip`, and `/providers` does not change.
    @Test func pinBringsItAlongSetByThePINSection() async throws {
        let h = try await TestHarness.make(
            providers: Self.providers, config: #"{"providers":["pin"],"pin":{"anonymous_per_ip":{"limit":1,"window":90}}}"#
        )
        try await h.test { client async throws in
            #expect(try await client.send(.get, "/api/v1/auth/providers").json["providers"] as? [String] == ["pin"])
            let s = try await anonymous(client)
            #expect(try await client.send(.post, "/api/v1/auth/anonymous").retryAfter == 90)
            #expect(try await client.send(.put, "/api/v1/auth/username", json: ["username": "otto"], bearer: s.accessToken).status == .ok)
        }
    }

    /// Listed beside `pin`, it is started once, by its own section.
    @Test func listedBesidePINItIsItsOwn() async throws {
        let h = try await TestHarness.make(
            providers: Self.providers,
            config: #"{"providers":["pin","anonymous"],"pin":{"anonymous_per_ip":{"limit":1,"window":90}},"anonymous":{"sign_ups_per_ip":{"limit":2,"window":30}}}"#
        )
        #expect(h.routes.filter { $0 == "POST /api/v1/auth/anonymous" }.count == 1)
        try await h.test { client async throws in
            #expect(try await client.send(.get, "/api/v1/auth/providers").json["providers"] as? [String] == ["pin", "anonymous"])
            _ = try await anonymous(client)
            _ = try await anonymous(client)
            // Two per 30 s: one more in 15 s (the PIN section would have said 90).
            #expect(try await client.send(.post, "/api/v1/auth/anonymous").retryAfter == 15)
        }
    }

    @Test func theDefaultProvidersStayAsTheyWere() async throws {
        let h = try await TestHarness.make(providers: Self.providers, config: "{}")
        try await h.test { client async throws in
            #expect(try await client.send(.get, "/api/v1/auth/providers").json["providers"] as? [String] == ["pin"])
            _ = try await anonymous(client)
        }
    }
}
