import AppleProvider
import AuthKernel
import AuthKernelTesting
import Foundation
import Synchronization
import HTTPTypes
import HummingbirdTesting
import Testing

struct AppleKeyCacheTests {
    func signIn(_ client: any TestClientProtocol, _ token: String) async throws -> TestResponse {
        try await client.send(.post, "/api/v1/auth/apple", json: ["identity_token": token])
    }

    @Test func unknownKidsRefetchAtMostOncePerMinuteAndARotatedKeyIsPickedUp() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        let rotated = try AppleSigningKey(kid: "apple-key-2")
        try await t.h.test { client async throws in
            #expect(try await signIn(client, try await t.token()).status == .ok)
            let base = t.apple.state.withLock { $0.jwksFetches }
            for _ in 0..<3 { #expect(try await signIn(client, try await t.token()).status == .ok) }
            #expect(t.apple.state.withLock { $0.jwksFetches } == base)  // cached

            // Apple rotates; tokens with the new kid arrive.
            let jwks = try AppleSigningKey.jwks([t.key, rotated])
            t.apple.state.withLock { $0.jwks = jwks }
            let newToken = try await rotated.sign(t.claims())
            t.h.clock.advance(by: 60)
            #expect(try await signIn(client, newToken).status == .ok)
            #expect(t.apple.state.withLock { $0.jwksFetches } == base + 1)

            // Unknown kids: one fetch, then none for a minute however many arrive.
            let unknown = try await AppleSigningKey(kid: "nobody").sign(t.claims())
            t.h.clock.advance(by: 60)
            for _ in 0..<5 { #expect(try await signIn(client, unknown).status == .unauthorized) }
            #expect(t.apple.state.withLock { $0.jwksFetches } == base + 2)
            t.h.clock.advance(by: 59)
            #expect(try await signIn(client, unknown).status == .unauthorized)
            #expect(t.apple.state.withLock { $0.jwksFetches } == base + 2)
            t.h.clock.advance(by: 1)
            #expect(try await signIn(client, unknown).status == .unauthorized)
            #expect(t.apple.state.withLock { $0.jwksFetches } == base + 3)
        }
    }

    @Test func appleUnreachableWithAWarmCacheKeepsSigningIn() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        try await t.h.test { client async throws in
            #expect(try await signIn(client, try await t.token()).status == .ok)
            t.apple.state.withLock { $0.jwksFails = true }
            t.h.clock.advance(by: 2 * 86_400)  // the cache has expired; a refetch fails
            let before = t.apple.state.withLock { $0.jwksFetches }
            #expect(try await signIn(client, try await t.token()).status == .ok)
            #expect(t.apple.state.withLock { $0.jwksFetches } == before + 1)
        }
        #expect(t.h.logs.contains("keeping the cached ones"))
    }

    @Test func cacheControlMaxAgeIsRespected() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        t.apple.state.withLock { $0.cacheControl = "public, max-age=120" }
        try await t.h.test { client async throws in
            t.h.clock.advance(by: 86_400)  // whatever the background fetch cached has expired
            #expect(try await signIn(client, try await t.token()).status == .ok)
            let base = t.apple.state.withLock { $0.jwksFetches }
            t.h.clock.advance(by: 119)
            #expect(try await signIn(client, try await t.token()).status == .ok)
            #expect(t.apple.state.withLock { $0.jwksFetches } == base)
            t.h.clock.advance(by: 2)
            #expect(try await signIn(client, try await t.token()).status == .ok)
            #expect(t.apple.state.withLock { $0.jwksFetches } == base + 1)
        }
    }

    @Test func startUpDoesNotWaitForASlowApple() async throws {
        let apple = FakeApple()
        try await apple.start()
        defer { apple.stop() }
        let start = ContinuousClock.now
        let h = try await TestHarness.make(
            providers: [AppleProvider.self], config: #"{"providers":["apple"],"apple":{"audiences":["a"],"jwks_url":"\#(apple.baseURL)/auth/slow-keys"}}"#
        )
        try await h.test { client async throws in
            let health = try await client.send(.get, "/health")
            #expect(health.status == .ok)
            // Apple takes 30 s to answer; the margins below leave room for a loaded machine.
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(try await client.send(.post, "/api/v1/auth/apple", json: ["identity_token": "garbage"]).errorCode == "INVALID_APPLE_TOKEN")
        }
        // Shutting down does not wait for Apple either.
        #expect(ContinuousClock.now - start < .seconds(15))
    }
}
