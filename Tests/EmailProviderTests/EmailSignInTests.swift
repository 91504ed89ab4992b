import AuthKernel
import AuthKernelTesting
import EmailProvider
import Foundation
import HTTPTypes
import Testing

struct EmailSignInTests {
    static let config = #"{"mail":{"transport":"outbox"},"email":{"max_attempts":3}}"#

    func harness(_ config: String = Self.config) async throws -> TestHarness {
        try await TestHarness.make(providers: [EmailProvider.self], config: config)
    }

    func lastCode(_ h: TestHarness) throws -> String {
        try #require(h.mail().last?.code)
    }

    @Test func signInByCodeCreatesTheUserThenSignsItIn() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let sent = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "Anna@Example.com"])
            #expect(sent.status == .ok)
            #expect(sent.json["message"] as? String == "Verification code sent")
            #expect(sent.json["expires_in"] as? Int == 300)
            let mail = try #require(h.mail().last)
            #expect(mail.to == "anna@example.com")
            let code = try lastCode(h)
            #expect(mail.text.contains(code))
            #expect(mail.text.contains("5 minutes"))
            #expect(try h.outbox().last?["sent_at"] is String)

            let verified = try await client.send(
                .post, "/api/v1/auth/email/verify",
                json: ["email": "ANNA@example.com", "code": code, "device_name": "Anna's iPhone", "platform": "ios"]
            )
            #expect(verified.status == .ok)
            let session = try verified.decode(SessionResponse.self)
            #expect(session.user.email == "anna@example.com")
            #expect(session.user.emailVerified)
            #expect(session.user.authProviders == ["email"])
            #expect(!session.user.isAnonymous)

            // A second sign-in finds the same user.
            h.clock.advance(by: 60)
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "anna@example.com"])
            let again = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "anna@example.com", "code": try lastCode(h)])
            #expect(try again.decode(SessionResponse.self).user.id == session.user.id)

            let sessions = try await client.send(.get, "/api/v1/auth/sessions", bearer: session.accessToken)
            let labels = (sessions.json["sessions"] as? [[String: Any]])?.compactMap { $0["device_name"] as? String }
            #expect(labels == ["Anna's iPhone"])
        }
    }

    @Test func theAccessTokenSaysHowTheUserSignedIn() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            let s = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": try lastCode(h)]).decode(SessionResponse.self)
            let payload = try #require(Base64URL.decode(s.accessToken.split(separator: ".")[1]))
            let claims = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
            #expect(claims?["amr"] as? [String] == ["email"])
            #expect(claims?["sub"] as? String == s.user.id)
            #expect(claims?["is_anonymous"] as? Bool == false)
            #expect(claims?["aud"] as? String == "authd")
            #expect(claims?["iss"] as? String == "http://127.0.0.1:0")
            #expect(claims?["sid"] is String && claims?["jti"] is String)
        }
    }

    @Test func badEmailsAndBodies() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            for path in ["send-code", "resend-code"] {
                let bad = try await client.send(.post, "/api/v1/auth/email/\(path)", json: ["email": "not-an-email"])
                #expect(bad.status == .badRequest && bad.errorCode == "INVALID_EMAIL")
                #expect(try await client.send(.post, "/api/v1/auth/email/\(path)", json: [:]).errorCode == "INVALID_REQUEST")
                #expect(try await client.send(.post, "/api/v1/auth/email/\(path)", json: ["email": 7]).errorCode == "INVALID_REQUEST")
            }
            let verify = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co"])
            #expect(verify.errorCode == "INVALID_REQUEST")
            let badDevice = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": "1", "device_name": String(repeating: "d", count: 101)])
            #expect(badDevice.errorCode == "INVALID_REQUEST")
            #expect(try h.mail().isEmpty)
        }
    }

    @Test func oneSendPerEmailPerIntervalWithRetryAfter() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"]).status == .ok)
            h.clock.advance(by: 20)
            for path in ["send-code", "resend-code"] {
                let early = try await client.send(.post, "/api/v1/auth/email/\(path)", json: ["email": "a@b.co"])
                #expect(early.status == .tooManyRequests)
                #expect(early.retryAfter == 40)
                #expect(early.headers[.retryAfter] == "40")
            }
            // Another address is not held back.
            #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "c@d.co"]).status == .ok)
            h.clock.advance(by: 40)
            let resent = try await client.send(.post, "/api/v1/auth/email/resend-code", json: ["email": "A@B.CO"])
            #expect(resent.status == .ok)
            #expect(resent.json["message"] as? String == "Verification code resent")
            #expect(try h.mail().count == 3)
        }
    }

    /// Contract §12: the interval is the address's and survives a sign-in that used the code up.
    @Test func aResendRightAfterASignInWaitsForTheInterval() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"]).status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": try lastCode(h)]).status == .ok)
            h.clock.advance(by: 5)
            let resent = try await client.send(.post, "/api/v1/auth/email/resend-code", json: ["email": "a@b.co"])
            #expect(resent.status == .tooManyRequests && resent.retryAfter == 55)
            #expect(try h.mail().count == 1, "no second mail inside the interval")
        }
    }

    @Test func sendsPerIPAreLimited() async throws {
        let h = try await harness(#"{"mail":{"transport":"outbox"},"email":{"sends_per_ip":{"limit":2,"window":3600}}}"#)
        try await h.test { client async throws in
            for i in 0..<2 {
                #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "u\(i)@b.co"]).status == .ok)
            }
            let limited = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "u9@b.co"])
            #expect(limited.status == .tooManyRequests && limited.retryAfter == 1800)
        }
    }

    @Test func wrongExpiredAndUsedCodesAreRefused() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            let code = try lastCode(h)
            let wrong = code == "000000" ? "111111" : "000000"
            let r = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": wrong])
            #expect(r.status == .unauthorized && r.errorCode == "INVALID_CODE")
            #expect(try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "x@b.co", "code": code]).errorCode == "INVALID_CODE")
            #expect(try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": code]).status == .ok)
            // Single use.
            #expect(try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": code]).errorCode == "INVALID_CODE")

            h.clock.advance(by: 60)
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            let late = try lastCode(h)
            h.clock.advance(by: 300)
            #expect(try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": late]).errorCode == "INVALID_CODE")
        }
    }

    @Test func aCodeDiesAfterMaxAttempts() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            let code = try lastCode(h)
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<3 {
                #expect(try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": wrong]).errorCode == "INVALID_CODE")
            }
            #expect(try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": code]).errorCode == "INVALID_CODE")
        }
    }

    @Test func resendingDoesNotResetTheFailureCount() async throws {
        let h = try await harness(#"{"mail":{"transport":"outbox"},"email":{"max_attempts":3,"max_failures":4}}"#)
        try await h.test { client async throws in
            for _ in 0..<2 {
                _ = try await client.send(.post, "/api/v1/auth/email/resend-code", json: ["email": "a@b.co"])
                let wrong = try lastCode(h) == "000000" ? "111111" : "000000"
                for _ in 0..<2 {
                    _ = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": wrong])
                }
                h.clock.advance(by: 60)
            }
            _ = try await client.send(.post, "/api/v1/auth/email/resend-code", json: ["email": "a@b.co"])
            let blocked = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": try lastCode(h)])
            #expect(blocked.status == .tooManyRequests)
            #expect((blocked.retryAfter ?? 0) > 3000)
        }
    }

    @Test func aSignedInCallerLinksTheEmailToItsAccount() async throws {
        let h = try await harness()
        let anonymous = try await h.kernel.users.createAnonymous()
        let session = try await h.kernel.sessions.startSession(anonymous, amr: ["pin"], device: .none)
        #expect(session.user.isAnonymous)
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            let linked = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": try lastCode(h)], bearer: session.accessToken)
            #expect(linked.status == .ok)
            let user = try linked.decode(SessionResponse.self).user
            #expect(user.id == anonymous.id.lowercased)
            #expect(!user.isAnonymous)
            #expect(user.email == "a@b.co" && user.emailVerified)
            #expect(user.authProviders == ["email"])
        }
    }

    @Test func linkingAnEmailOfAnotherUserIsRefusedAndChangesNothing() async throws {
        let h = try await harness()
        let owner = try await h.signIn("owner", email: "taken@b.co")
        let caller = try await h.signIn("caller")
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "taken@b.co"])
            let r = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "taken@b.co", "code": try lastCode(h)], bearer: caller.accessToken)
            #expect(r.status == .conflict && r.errorCode == "IDENTITY_IN_USE")
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: caller.accessToken)
            #expect(me.status == .ok)
            #expect(me.json["email"] is NSNull)
            #expect(me.json["auth_providers"] as? [String] == ["test"])
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: owner.accessToken).json["email"] as? String == "taken@b.co")
        }
    }

    @Test func aBadBearerOnVerifyIsRefusedRatherThanIgnored() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            let r = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": try lastCode(h)], bearer: "forged")
            #expect(r.status == .unauthorized)
        }
    }

    @Test func providersListAndCodesNeverLogged() async throws {
        let h = try await harness()
        let code = try await h.test { client async throws in
            #expect(try await client.send(.get, "/api/v1/auth/providers").json["providers"] as? [String] == ["email"])
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            let code = try lastCode(h)
            _ = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "a@b.co", "code": code])
            return code
        }
        #expect(!h.logs.contains(code))
    }

    @Test func unlistedProvidersHaveNoRoutes() async throws {
        let h = try await TestHarness.make(providers: [EmailProvider.self], config: #"{"providers":[]}"#)
        try await h.test { client async throws in
            let r = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "a@b.co"])
            #expect(r.status == .notFound)
        }
    }

    @Test func unknownEmailConfigKeysStopStartUp() async throws {
        await #expect(throws: ConfigError("unknown configuration key email.code_tll")) {
            _ = try await TestHarness.make(providers: [EmailProvider.self], config: #"{"email":{"code_tll":5}}"#)
        }
    }
}
