import AppleProvider
import AuthKernel
import AuthKernelTesting
import Foundation
import Synchronization
import HTTPTypes
import Testing

struct AppleRevocationTests {
    @Test func theCodeIsExchangedTheTokenKeptEncryptedAndRevokedOnDeletionWithARetry() async throws {
        let t = try await AppleTest.make(revocation: true)
        defer { t.apple.stop() }
        let folder = t.h.folder
        try await t.h.test { client async throws in
            let r = try await client.send(.post, "/api/v1/auth/apple", json: ["identity_token": try await t.token(), "authorization_code": "code-42"])
            #expect(r.status == .ok)
            let s = try r.decode(SessionResponse.self)
            #expect(t.apple.state.withLock { $0.exchanges } == ["code-42"])
            #expect(t.apple.state.withLock { $0.badSecrets } == 0)

            // At rest the refresh token is sealed: neither the journal nor the user record holds it in plain text.
            let plain = "apple-refresh-for-code-42"
            let journal = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("journal-") }
                .map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }.joined()
            #expect(journal.contains("\"apple\""))
            #expect(!journal.contains(plain))
            let stored = try await t.h.kernel.users.user(id: UUID(uuidString: s.user.id)!)
            let secretsText = String(describing: stored?.secrets ?? [:])
            #expect(!secretsText.contains(plain))

            // Deleting the account revokes; the first attempt fails and never blocks the deletion.
            t.apple.state.withLock { $0.failRevokes = 1 }
            #expect(try await client.send(.delete, "/api/v1/auth/account", bearer: s.accessToken).status == .noContent)
            #expect(t.apple.state.withLock { $0.revoked }.isEmpty)
            #expect(try await t.h.kernel.jobs.pending().count == 1)
            #expect(!journal.contains(plain))

            t.h.clock.advance(by: 60)
            // Due now. The server's own job runner (every second) may take it before this test does;
            // either way it runs once, and then it is gone.
            let deadline = ContinuousClock.now + .seconds(120)  // an event waited for; generous for a loaded machine
            while ContinuousClock.now < deadline {
                _ = await t.h.kernel.jobs.runDue()
                if try await t.h.kernel.jobs.pending().isEmpty { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(t.apple.state.withLock { $0.revoked } == [plain])
            #expect(try await t.h.kernel.jobs.pending().isEmpty)
        }
        #expect(t.h.logs.contains("will retry"))
        #expect(!t.h.logs.contains("apple-refresh-for"))
    }

    @Test func withoutTheKeyConfiguredSignInSkipsTheExchange() async throws {
        let t = try await AppleTest.make()
        defer { t.apple.stop() }
        try await t.h.test { client async throws in
            let r = try await client.send(.post, "/api/v1/auth/apple", json: ["identity_token": try await t.token(), "authorization_code": "code-1"])
            #expect(r.status == .ok)
            let s = try r.decode(SessionResponse.self)
            #expect(t.apple.state.withLock { $0.exchanges }.isEmpty)
            #expect(try await client.send(.delete, "/api/v1/auth/account", bearer: s.accessToken).status == .noContent)
            #expect(try await t.h.kernel.jobs.pending().isEmpty)
        }
    }

    @Test func aFailedExchangeDoesNotStopTheSignIn() async throws {
        let t = try await AppleTest.make(revocation: true, tokenURL: "missing")
        defer { t.apple.stop() }
        try await t.h.test { client async throws in
            let r = try await client.send(.post, "/api/v1/auth/apple", json: ["identity_token": try await t.token(), "authorization_code": "code-9"])
            #expect(r.status == .ok)
        }
        #expect(t.h.logs.contains("could not exchange the Apple authorization code"))
    }
}
