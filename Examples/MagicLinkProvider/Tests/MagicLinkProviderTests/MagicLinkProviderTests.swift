import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import MagicLinkProvider
import Testing

/// The recipe's provider through the test kit: the link read from the mail as a person reads it.
struct MagicLinkProviderTests {
    static let config = #"{"providers":["magic-link"],"magic-link":{"link":"https://app.example.com/magic"}}"#

    /// The token of the newest link mailed to `email`, taken from the mail's text.
    func token(_ h: TestHarness, to email: String) throws -> String {
        let link = try #require(try h.mail(to: email).last?.link)
        #expect(link.hasPrefix("https://app.example.com/magic?token="))
        return String(try #require(link.split(separator: "=", maxSplits: 1).last))
    }

    @Test func aMailedLinkSignsInOnceAndCreatesAVerifiedAccount() async throws {
        let h = try await TestHarness.make(providers: [MagicLinkProvider.self], config: Self.config)
        try await h.test { client async throws in
            let sent = try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "Ada@Example.com"])
            #expect(sent.status == .ok && sent.json["expires_in"] as? Int == 900)
            let token = try token(h, to: "ada@example.com")
            let signedIn = try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: ["token": token, "device_name": "phone"])
            #expect(signedIn.status == .ok)
            let session = try signedIn.decode(SessionResponse.self)
            #expect(session.user.email == "ada@example.com" && session.user.emailVerified && session.user.authProviders == ["magic-link"])
            let again = try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: ["token": token])
            #expect(again.status == .unauthorized && again.errorCode == "INVALID_MAGIC_LINK", "a link works once")
        }
        #expect(try h.audit(event: "sign_in").count == 1, "the kernel audits the sign-in, once")
        #expect(try h.audit(event: "sign_in_failed").count == 1)
    }

    @Test func aNewLinkCancelsTheOldOneAndALinkExpires() async throws {
        let h = try await TestHarness.make(providers: [MagicLinkProvider.self], config: Self.config)
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "bo@example.com"])
            let first = try token(h, to: "bo@example.com")
            let early = try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "bo@example.com"])
            #expect(early.status == .tooManyRequests, "one link a minute per address")
            h.clock.advance(by: 60)
            _ = try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "bo@example.com"])
            let second = try token(h, to: "bo@example.com")
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: ["token": first]).errorCode == "INVALID_MAGIC_LINK")
            h.clock.advance(by: 901)
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: ["token": second]).errorCode == "INVALID_MAGIC_LINK", "expired")
        }
    }

    @Test func theCodeInTheSameMailSignsInOnAnotherDeviceAndEndsTheLink() async throws {
        let h = try await TestHarness.make(providers: [MagicLinkProvider.self], config: Self.config)
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "cy@example.com"])
            let mail = try #require(try h.mail(to: "cy@example.com").last)
            // The code as a person reads it in the mail, beside the link.
            let code = try #require(mail.code)
            #expect(mail.text.contains(code) && mail.subject.contains(code) && mail.link != nil)
            let token = try token(h, to: "cy@example.com")
            let wrong = try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "cy@example.com", "code": "000000"])
            #expect(wrong.status == .unauthorized && wrong.errorCode == "INVALID_CODE")
            let signedIn = try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "cy@example.com", "code": code, "device_name": "TV"])
            #expect(signedIn.status == .ok)
            let session = try signedIn.decode(SessionResponse.self)
            #expect(session.user.emailVerified && session.user.authProviders == ["magic-link"])
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "cy@example.com", "code": code]).errorCode == "INVALID_CODE", "a code works once")
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: ["token": token]).errorCode == "INVALID_MAGIC_LINK", "the link ended with the code")
        }
        #expect(try h.audit(event: "sign_in_failed").count == 3, "the wrong code, the used code, the ended link")
    }

    @Test func theLinkEndsTheCodeAndFiveWrongCodesEndIt() async throws {
        let h = try await TestHarness.make(providers: [MagicLinkProvider.self], config: Self.config)
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "di@example.com"])
            let code = try #require(try h.mail(to: "di@example.com").last?.code)
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: ["token": try token(h, to: "di@example.com")]).status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "di@example.com", "code": code]).errorCode == "INVALID_CODE")

            h.clock.advance(by: 60)
            _ = try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "di@example.com"])
            let fresh = try #require(try h.mail(to: "di@example.com").last?.code)
            var remaining: [Int] = []
            for _ in 0..<5 {
                let r = try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "di@example.com", "code": fresh == "123456" ? "654321" : "123456"])
                remaining.append(((r.json["error"] as? [String: Any])?["details"] as? [String: Any])?["attempts_remaining"] as? Int ?? -1)
            }
            #expect(remaining == [4, 3, 2, 1, 0])
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "di@example.com", "code": fresh]).errorCode == "INVALID_CODE", "dead after five wrong tries")
        }
    }

    @Test func badBodiesAreRefused() async throws {
        let h = try await TestHarness.make(providers: [MagicLinkProvider.self], config: Self.config)
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/send", json: ["email": "not an address"]).errorCode == "INVALID_EMAIL")
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: [:]).errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/redeem", json: ["token": String(repeating: "x", count: 5000)]).errorCode == "INVALID_MAGIC_LINK")
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "x", "code": "123456"]).errorCode == "INVALID_EMAIL")
            #expect(try await client.send(.post, "/api/v1/auth/magic-link/verify-code", json: ["email": "a@example.com"]).errorCode == "INVALID_REQUEST")
        }
        #expect(try h.mail().isEmpty)
    }
}
