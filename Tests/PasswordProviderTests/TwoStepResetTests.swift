import AuthKernel
import AuthdCore
import AuthKernelTesting
import AuthStorage
import Foundation
import HTTPTypes
import PasswordProvider
import Testing

/// Contract §5: the two-step email reset (code → `reset_token` → new password, optionally signed
/// in), and `attempts_remaining` on every wrong code.
struct TwoStepResetTests {
    typealias T = PasswordTest
    static let newPassword = "a brand new secret"

    static func remaining(_ r: HarnessResponse) -> Int? {
        ((r.json["error"] as? [String: Any])?["details"] as? [String: Any])?["attempts_remaining"] as? Int
    }

    static func resetCode(_ client: HarnessClient, _ h: TestHarness, _ email: String) async throws -> String {
        let before = try h.mail().count
        _ = try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": email])
        let mail = try await T.waitForMail(h, count: before + 1)
        return try #require(mail.last?.code)
    }

    @Test func codeThenTokenThenPasswordAndSignedIn() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let old = try await T.registered(client, h, email: "t@x.io")
            let code = try await Self.resetCode(client, h, "t@x.io")
            let step1 = try await client.send(.post, "/api/v1/auth/password/reset/email/verify", json: ["email": "t@x.io", "code": code])
            #expect(step1.status == .ok && step1.json["expires_in"] as? Int == 600 && step1.headers[.cacheControl] == "no-store")
            let token = try #require(step1.json["reset_token"] as? String)
            #expect(try await T.login(client, "t@x.io", T.password).status == .ok, "nothing changed yet")

            let complete = "/api/v1/auth/password/reset/complete"
            let weak = try await client.send(.post, complete, json: ["reset_token": token, "new_password": "t@x.io"])
            #expect(weak.errorCode == "WEAK_PASSWORD", "checked against the account's email, and the token survives it")
            let done = try await client.send(.post, complete, json: ["resetToken": token, "newPassword": Self.newPassword, "signIn": true, "deviceName": "Phone"])
            #expect(done.status == .ok && done.accessToken != nil)
            let accessToken = try #require(done.accessToken)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: accessToken).status == .ok)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: old.accessToken).status == .unauthorized, "every older session ended")
            #expect(try await T.login(client, "t@x.io", Self.newPassword).status == .ok)

            let reused = try await client.send(.post, complete, json: ["reset_token": token, "new_password": "yet another secret"])
            #expect(reused.status == .unauthorized && reused.errorCode == "INVALID_CODE" && Self.remaining(reused) == 0, "single use")
        }
    }

    @Test func withoutSignInItAnswersAMessageAndBadTokensAreRefused() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "m@x.io")
            let code = try await Self.resetCode(client, h, "m@x.io")
            let token = try #require(try await client.send(.post, "/api/v1/auth/password/reset/email/verify", json: ["email": "m@x.io", "code": code]).json["reset_token"] as? String)
            let complete = "/api/v1/auth/password/reset/complete"
            let (id, secret) = (token.split(separator: ".")[0], token.split(separator: ".")[1])
            let forged = String(id) + "." + String(secret.reversed() == Array(secret) ? "0000000000000000" : String(secret.reversed()))
            for bad in ["", "nonsense", "\(id).", String(repeating: "a", count: 80), forged] {
                let r = try await client.send(.post, complete, json: ["reset_token": bad, "new_password": Self.newPassword])
                #expect(r.status == .unauthorized && r.errorCode == "INVALID_CODE", "\(bad.prefix(12))")
            }
            let afterForgery = try await client.send(.post, complete, json: ["reset_token": token, "new_password": Self.newPassword])
            #expect(afterForgery.errorCode == "INVALID_CODE", "one wrong secret kills the token")
            #expect(try await client.send(.post, complete, json: ["new_password": Self.newPassword]).errorCode == "INVALID_REQUEST")

            let code2 = try await Self.resetCode(client, h, "m@x.io")
            let token2 = try #require(try await client.send(.post, "/api/v1/auth/password/reset/email/verify", json: ["email": "m@x.io", "code": code2]).json["reset_token"] as? String)
            let done = try await client.send(.post, complete, json: ["reset_token": token2, "new_password": Self.newPassword])
            #expect(done.status == .ok && done.json["message"] as? String == "Password changed" && done.accessToken == nil)
        }
    }

    @Test func wrongCodesSayHowManyTriesAreLeftForKnownAndUnknownEmailsAlike() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "k@x.io")
            let code = try await Self.resetCode(client, h, "k@x.io")
            _ = try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": "ghost@x.io"])
            // The unknown email's code is issued after the answer, by another task: waited for, not timed.
            for _ in 0..<6000 {
                let issued = try await h.server.store.read([.code(purpose: "password_reset", key: "ghost@x.io")]) {
                    $0.code(purpose: "password_reset", key: "ghost@x.io") != nil
                }
                if issued { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let wrong = code == "000000" ? "111111" : "000000"
            for email in ["k@x.io", "ghost@x.io"] {
                var seen: [Int?] = []
                for _ in 0..<6 {
                    let r = try await client.send(.post, "/api/v1/auth/password/reset/email/verify", json: ["email": email, "code": wrong])
                    #expect(r.errorCode == "INVALID_CODE")
                    seen.append(Self.remaining(r))
                }
                #expect(seen == [4, 3, 2, 1, 0, 0], "\(email)")
            }
            let never = try await client.send(.post, "/api/v1/auth/password/reset/email/verify", json: ["email": "never@x.io", "code": wrong])
            #expect(never.errorCode == "INVALID_CODE" && Self.remaining(never) == 0)

            // verify-email counts a right code with the wrong password as a wrong try.
            _ = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "new@x.io", "password": T.password])
            let verifyCode = try #require(try T.lastCode(h, to: "new@x.io"))
            let badPassword = try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": "new@x.io", "code": verifyCode, "password": "not the one chosen"])
            #expect(badPassword.errorCode == "INVALID_CODE" && Self.remaining(badPassword) == 4)
        }
    }
}
