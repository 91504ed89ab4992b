@testable import AuthdCore
import AuthKernel
import AuthKernelTesting
import AuthStorage
import Foundation
import Testing

/// Authorization codes and consent on the injected clock (contract §13): 60 seconds, once; consent
/// outlives a reset but not the account.
struct AuthorizationCodeTests {
    static func grant() -> AuthorizationCodes.Grant {
        AuthorizationCodes.Grant(
            clientID: "c1", redirectURI: "https://app.example/cb", codeChallenge: "x", nonce: "n", userID: UUID().lowercased,
            sessionID: UUID().lowercased, scopes: ["openid"], authTime: 0, amr: ["email"])
    }

    @Test func aCodeLivesSixtySecondsAndWorksOnce() async throws {
        let h = try await TestHarness.make()
        let codes = AuthorizationCodes(store: h.server.store, clock: h.clock)
        let code = try await codes.issue(Self.grant())
        h.clock.advance(by: 59)
        guard case .grant = try await codes.redeem(code, session: UUID()) else { Issue.record("a code 59 s old is good"); return }
        guard case .replayed = try await codes.redeem(code, session: UUID()) else { Issue.record("a second use is a replay"); return }
        let late = try await codes.issue(Self.grant())
        h.clock.advance(by: 61)
        guard case .invalid = try await codes.redeem(late, session: UUID()) else { Issue.record("a code 61 s old is dead"); return }
        guard case .invalid = try await codes.redeem("not-a-code", session: UUID()) else { Issue.record("an unknown code"); return }
    }

    @Test func twoRedemptionsRacingGiveOneGrant() async throws {
        let h = try await TestHarness.make()
        let codes = AuthorizationCodes(store: h.server.store, clock: h.clock)
        let code = try await codes.issue(Self.grant())
        let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { if case .grant = try await codes.redeem(code, session: UUID()) { true } else { false } }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(granted == 1)
    }

    @Test func consentIsForgottenWithTheAccountOnly() async throws {
        let h = try await TestHarness.make()
        let session = try await h.signIn(email: "cora@example.com")
        let id = try #require(UUID(uuidString: session.user.id))
        let user = try #require(try await h.kernel.users.user(id: id))
        let consents = ConsentGrants(store: h.server.store, clock: h.clock)
        try await consents.remember(user: user.id, client: "c1", scopes: ["openid", "email"])
        try await consents.remember(user: user.id, client: "c2", scopes: ["openid"])
        try await h.kernel.sessions.revokeAll(of: user.id)
        #expect(try await consents.grants(of: user.id).count == 2, "ending sessions keeps consent")
        await h.kernel.accountDeletion.run(for: user)
        try await h.kernel.users.delete(user.id)
        #expect(try await consents.grants(of: user.id).isEmpty)
    }
}
