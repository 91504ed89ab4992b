import AppleProvider
import AuthKernel
import AuthdServer
import AuthKernelTesting
import Foundation
import Synchronization
import HTTPTypes
import Testing

struct AppleKeyCacheTests {
    func signIn(_ client: HarnessClient, _ token: String) async throws -> HarnessResponse {
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

    /// Proved by order, not by elapsed time: Apple's answer is held until the test lets it go, so a
    /// server that waited for it at start-up or at shutdown could not answer /health, or stop, before
    /// the stand-in finishes it (after two minutes, on its own) and `heldAnswered` would not be 0.
    @Test func startUpDoesNotWaitForASlowApple() async throws {
        let apple = FakeApple()
        try await apple.start()
        defer { apple.stop() }
        let h = try await TestHarness.make(
            providers: [AppleProvider.self], config: #"{"providers":["apple"],"apple":{"audiences":["a"],"jwks_url":"\#(apple.baseURL)/auth/held-keys"}}"#,
            http: AsyncHTTPClientOutbound.shared
        )
        try await h.test { client async throws in
            // The start-up fetch has reached Apple (an event: waited for, not timed)…
            for _ in 0..<6000 where apple.state.withLock({ $0.heldArrived }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(apple.state.withLock { $0.heldArrived } == 1)
            // …and the server answers while Apple's answer is still held.
            #expect(try await client.send(.get, "/health").status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/apple", json: ["identity_token": "garbage"]).errorCode == "INVALID_APPLE_TOKEN")
            #expect(apple.state.withLock { $0.heldAnswered } == 0)
        }
        // Shutting down does not wait for Apple either: the server has stopped, Apple's answer is still held.
        #expect(apple.state.withLock { $0.heldAnswered } == 0)
        apple.state.withLock { $0.heldReleased = true }
    }
}
