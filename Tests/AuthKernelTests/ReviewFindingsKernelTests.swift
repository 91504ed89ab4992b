import AuthdCore
import AuthdServer
@testable import AuthStorage
@testable import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Testing

/// The second pass over the request surface after the review (issue #24): every value a client
/// chooses is bounded or refused before it is stored, logged or mailed.
struct ReviewFindingsKernelTests {
    @Test func logSafeEscapesWhatCouldForgeOrHideALineAndCutsLongValues() {
        #expect(LogSafe.text("a\nb\rc\td") == "a\\nb\\rc\\td")
        #expect(LogSafe.text("x\u{2028}y\u{202E}z\u{7F}") == "x\\u{2028}y\\u{202e}z\\u{7f}")
        #expect(LogSafe.text(String(repeating: "x", count: 500), maxLength: 10) == "xxxxxxxxxx…")
        #expect(LogSafe.isPlain("Anna's iPhone 👩‍💻") && !LogSafe.isPlain("two\nlines"))
    }

    @Test func labelsRefuseBidiOverridesAndSeparatorsButKeepEmoji() throws {
        for bad in ["evil\u{202E}gnp.exe", "one\u{2028}two", "x\u{2066}y", "p\u{E000}"] {
            #expect(throws: AuthError.self) { try DeviceInfo(name: bad, platform: nil) }
            #expect(throws: AuthError.self) { try DisplayName.validate(bad) }
        }
        #expect(try DeviceInfo(name: "Family 👨‍👩‍👧 iPad", platform: "ios").name == "Family 👨‍👩‍👧 iPad")
    }

    @Test func accessTokenRejectionsLogTheAlgorithmEscapedAndCut() {
        let reason = "\(AccessTokenVerifier.Rejection.unsupportedAlgorithm("none\nFORGED " + String(repeating: "x", count: 5000)))"
        #expect(!reason.contains("\n") && reason.utf8.count < 100)
    }

    @Test func mailTemplatesFillValuesInOnePass() {
        // A device name a client chose must not pull another value (a code) into the mail.
        #expect(MailTemplates.fill("{{device}} / {{code}}", ["device": "{{code}}", "code": "123456"]) == "{{code}} / 123456")
        #expect(MailTemplates.fill("{{unknown}} {{", [:]) == "{{unknown}} {{")
    }

    @Test func malformedApprovalIdsAreRefusedBeforeTheStore() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "a@b.c")
        try await h.test { client async throws in
            for id in [String(repeating: "a", count: 20_000), "short", "not/base64url!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"] {
                let r = try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": "123"], bearer: s.accessToken)
                #expect(r.status == .notFound)
            }
        }
    }

    @Test func aUserMayHoldOnlyAFewEventStreams() async throws {
        let h = try await TestHarness.make()
        let user = UUID()
        var streams: [AsyncStream<ApprovalRecord>] = []
        for _ in 0..<ApprovalService.maxSubscriptionsPerUser { streams.append(try h.kernel.approvals.subscribe(userID: user)) }
        #expect(throws: AuthError.self) { _ = try h.kernel.approvals.subscribe(userID: user) }
        #expect(h.kernel.approvals.subscriberCount == ApprovalService.maxSubscriptionsPerUser)
        _ = try h.kernel.approvals.subscribe(userID: UUID())  // another user has their own
        streams.removeAll()
        await h.server.close()
    }

    @Test func theVerifiedTokenCacheIsBoundedByBytes() {
        let cache = VerifiedTokenCache(capacity: 1000, maxBytes: 10_000)
        let claims = AccessTokenClaims(iss: "i", aud: "a", sub: "s", sid: "s", iat: 0, exp: Int.max / 2, jti: "j", amr: [], isAnonymous: false)
        let entry = VerifiedTokenCache.Entry(claims: claims, userID: UUID(), sessionID: UUID())
        for i in 0..<100 { cache.insert(String(repeating: "t", count: 1000) + "\(i)", entry: entry, now: Date()) }
        #expect(cache.count <= 10)
    }
}
