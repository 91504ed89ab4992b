import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import PasswordProvider
import Testing

/// `password.login_requires_email_code` (contract §10): a right password answers the 202 challenge
/// and mails a code; the challenge completes with it.
struct EmailCodeSecondFactorTests {
    static let config = #"{"mail":{"transport":"outbox"},"password":{"login_requires_email_code":true}}"#

    static func amr(_ token: String) throws -> [String] {
        let claims = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(token.split(separator: ".")[1])!)) as? [String: Any]
        return claims?["amr"] as? [String] ?? []
    }

    @Test func aRightPasswordMailsACodeThatCompletesTheSignIn() async throws {
        let h = try await PasswordTest.harness(Self.config)
        try await h.test { client async throws in
            // Registration proved the address with a code already: no second one.
            let registered = try await PasswordTest.registered(client, h, email: "eve@example.com")
            #expect(try Self.amr(registered.accessToken) == ["password"])
            let before = try h.mail().count

            let login = try await PasswordTest.login(client, "eve@example.com", PasswordTest.password)
            #expect(login.status == .accepted && login.json["factors"] as? [String] == ["email_code"])
            let challenge = try #require(login.json["challenge"] as? String)
            let mail = try h.mail()
            #expect(mail.count == before + 1 && mail.last?.to == "eve@example.com")
            let code = try #require(mail.last?.code)
            #expect((mail.last?.subject)?.contains("after your password") == true)

            // Asked for again at once: a resend never pretends (contract §12) — 429 with the wait, and
            // the code already mailed is the one.
            let early = try await client.send(.post, "/api/v1/auth/mfa/email-code", json: ["challenge": challenge])
            #expect(early.status == .tooManyRequests && early.retryAfter == 30)
            #expect(try h.mail().count == before + 1)
            h.clock.advance(by: 31)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/email-code", json: ["challenge": challenge]).status == .noContent)
            let newer = try #require(try PasswordTest.lastCode(h, to: "eve@example.com"))
            if newer != code {
                let stale = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "email_code": code])
                #expect(stale.errorCode == "INVALID_CODE")
            }
            let session = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "email_code": newer])
            #expect(session.status == .ok)
            #expect(try Self.amr(try #require(session.accessToken)) == ["password", "email_code", "mfa"])
            // Used: the challenge is gone.
            #expect(try await client.send(.post, "/api/v1/auth/mfa/email-code", json: ["challenge": challenge]).errorCode == "INVALID_CHALLENGE")
        }
    }

    @Test func wrongCodesKillTheChallengeAndAWrongPasswordMailsNothing() async throws {
        let h = try await PasswordTest.harness(Self.config)
        try await h.test { client async throws in
            _ = try await PasswordTest.registered(client, h, email: "eve@example.com")
            let before = try h.mail().count
            #expect(try await PasswordTest.login(client, "eve@example.com", "not the password").errorCode == "INVALID_CREDENTIALS")
            #expect(try h.mail().count == before)

            let challenge = try #require(try await PasswordTest.login(client, "eve@example.com", PasswordTest.password).json["challenge"] as? String)
            let code = try #require(try PasswordTest.lastCode(h, to: "eve@example.com"))
            let wrong = code == "000000" ? "111111" : "000000"
            for remaining in [4, 3, 2, 1, 0] {
                let r = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "email_code": wrong])
                #expect(r.errorCode == "INVALID_CODE")
                #expect(((r.json["error"] as? [String: Any])?["details"] as? [String: Any])?["attempts_remaining"] as? Int == remaining)
            }
            #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "email_code": code]).errorCode == "INVALID_CHALLENGE")
        }
    }

    @Test func atMostTwentyCodesAreAskedForOneUserIn15Minutes() async throws {
        let h = try await PasswordTest.harness(#"{"mail":{"transport":"outbox"},"password":{"login_requires_email_code":true,"login_per_email":{"limit":100,"window":60}}}"#)
        try await h.test { client async throws in
            _ = try await PasswordTest.registered(client, h, email: "eve@example.com")
            let before = try h.mail().count
            var last: String?
            for _ in 0..<22 {
                let r = try await PasswordTest.login(client, "eve@example.com", PasswordTest.password)
                #expect(r.status == .accepted)
                last = r.json["challenge"] as? String
            }
            #expect(try h.mail().count == before + 20)
            let asked = try await client.send(.post, "/api/v1/auth/mfa/email-code", json: ["challenge": try #require(last)])
            #expect(asked.status == .tooManyRequests && (asked.retryAfter ?? 0) > 0)
        }
    }

    @Test func aPagesOrAnyOtherPasswordSignInIsAskedButRegistrationIsNot() async throws {
        // The policy asks unless the sign-in itself proved the address (verify-email, a reset).
        let h = try await PasswordTest.harness(Self.config)
        try await h.test { client async throws in
            let s = try await PasswordTest.registered(client, h, email: "eve@example.com")
            #expect(s.user.email == "eve@example.com")
            let user = try #require(try await h.kernel.users.user(email: "eve@example.com"))
            let response = try await h.kernel.sessions.signIn(user, amr: ["password"], device: .none)
            guard case .secondFactorRequired(let challenge) = response else { Issue.record("no challenge: \(response)"); return }
            #expect(challenge.factors == ["email_code"])
            // An unverified address has nowhere to get a code: the password alone lets such a user in.
            let unverified = try await h.kernel.users.update(user.id) { $0.emailVerified = false }
            #expect(try await h.kernel.sessions.signIn(unverified, amr: ["password"], device: .none).session != nil)
        }
    }

    @Test func withoutTheSettingThereIsNoEmailedCode() async throws {
        let h = try await PasswordTest.harness()
        try await h.test { client async throws in
            _ = try await PasswordTest.registered(client, h, email: "eve@example.com")
            #expect(try await PasswordTest.login(client, "eve@example.com", PasswordTest.password).status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/email-code", json: ["challenge": "nothing"]).errorCode == "INVALID_CHALLENGE")
            #expect(try await client.send(.post, "/api/v1/auth/mfa/email-code", json: [String: String]()).errorCode == "INVALID_REQUEST")
        }
    }
}
