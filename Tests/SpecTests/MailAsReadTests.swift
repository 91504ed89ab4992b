import AnonymousProvider
import AuthKernel
import AuthKernelTesting
import EmailProvider
import Foundation
import HTTPTypes
import PINProvider
import PasskeyProvider
import PasswordProvider
import TOTPProvider
import Testing

/// Every mail the built-in providers send, sent through its real path and read as a person reads it:
/// the code taken from the text (never from the outbox's side field) finishes the flow, the HTML shows
/// it too, and nothing of a template is left unfilled (``TestHarness/mail(to:)`` checks every message).
struct MailAsReadTests {
    static let config = #"{"mail":{"transport":"outbox"},"password":{"login_requires_email_code":true}}"#
    /// Templates whose flow runs only in a browser, and the black-box test that reads their mail.
    static let readElsewhere = [
        "kernel.credentials_removed": "IntegrationTests/blackbox/test_pages.py",
        "kernel.no_account": "IntegrationTests/blackbox/test_signup.py",
        "kernel.removed_by_operator": "IntegrationTests/blackbox/test_lost_phone.py",
        "kernel.invitation": "IntegrationTests/blackbox/test_signup.py",
        "kernel.invitation_code": "IntegrationTests/blackbox/test_signup.py",
    ]

    @Test func everyTemplateIsSentAndReadableAndTheEmailedSecondFactorCanBeFinishedByAPerson() async throws {
        let h = try await TestHarness.make(
            providers: [EmailProvider.self, AnonymousProvider.self, PINProvider.self, PasswordProvider.self, TOTPProvider.self, PasskeyProvider.self],
            config: Self.config)
        try await h.test { client async throws in
            // An email-code sign-in: its mail speaks of a sign-in code, not of a password.
            #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "ada@example.com"]).status == .ok)
            let signInMail = try #require(try h.mail(to: "ada@example.com").last)
            #expect(signInMail.template == "email.sign_in_code" && !signInMail.text.contains("password"))
            let ada = try await client.send(
                .post, "/api/v1/auth/email/verify", json: ["email": "ada@example.com", "code": try #require(signInMail.code)])
            #expect(ada.status == .ok)

            // Registration, then a password sign-in finished with the code the person reads in the second mail.
            let password = "correct horse battery"
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "bo@example.com", "password": password]).status == .accepted)
            let verification = try #require(try h.mail(to: "bo@example.com").last)
            #expect(verification.template == "password.email_verification")
            let registered = try await client.send(
                .post, "/api/v1/auth/password/verify-email", json: ["email": "bo@example.com", "code": try #require(verification.code), "password": password])
            #expect(registered.status == .ok)
            let login = try await client.send(.post, "/api/v1/auth/password/login", json: ["email": "bo@example.com", "password": password])
            #expect(login.status == .accepted && login.json["factors"] as? [String] == ["email_code"])
            let secondFactor = try #require(try h.mail(to: "bo@example.com").last)
            #expect(secondFactor.template == "password.second_factor_code" && secondFactor.text.contains("password"))
            let signedIn = try await client.send(
                .post, "/api/v1/auth/mfa/verify",
                json: ["challenge": try #require(login.json["challenge"] as? String), "email_code": try #require(secondFactor.code)])
            #expect(signedIn.status == .ok)
            let session = try signedIn.decode(SessionResponse.self)

            // A new way to sign in is announced.
            let beforePIN = try h.mail().count
            #expect(try await client.send(.put, "/api/v1/auth/pin", json: ["pin": "4711"], bearer: session.accessToken).status == .noContent)
            #expect(try await Self.waitForMail(h, count: beforePIN + 1).last?.template == "kernel.sign_in_method_added")

            // A reset by mailed code, and the notice that follows it.
            let before = try h.mail().count
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": "bo@example.com"]).status == .ok)
            let resetMail = try #require(try await Self.waitForMail(h, count: before + 1).last)
            #expect(resetMail.template == "password.password_reset")
            let reset = try await client.send(
                .post, "/api/v1/auth/password/reset/email/verify",
                json: ["email": "bo@example.com", "code": try #require(resetMail.code), "new_password": "another good secret"])
            #expect(reset.status == .ok)
            let changed = try #require(try await Self.waitForMail(h, count: before + 2).last)
            #expect(changed.template == "password.password_changed" && changed.code == nil)

            let sent = Set(try h.mail().compactMap(\.template))
            let registeredNames = Set(h.kernel.mailer.templates.names)
            #expect(sent.union(Self.readElsewhere.keys) == registeredNames, "a template no test sends: \(registeredNames.subtracting(sent))")
        }
    }

    static func waitForMail(_ h: TestHarness, count: Int) async throws -> [SentMail] {
        for _ in 0..<3000 {
            if try h.mail().count >= count { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try h.mail()
    }
}
