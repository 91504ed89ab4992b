import AuthKernel
import AuthKernelTesting
import EmailProvider
import Foundation
import InviteCodeProvider
import Testing

/// The provider on the kernel, through the test kit: no socket, a temporary data folder, mail and logs captured.
struct InviteCodeProviderTests {
    static let config = #"{"providers":["invite"],"invite":{"codes":["ada-7d2f-93ac-41b8","bob-e0c6-55d1-9f3a"],"attempts_per_ip":{"limit":5,"window":60}}}"#

    @Test func aCodeCreatesItsAccountThenSignsBackIntoIt() async throws {
        let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: Self.config)
        try await h.test { client async throws in
            #expect(try await client.send(.get, "/api/v1/auth/providers").json["providers"] as? [String] == ["invite"])
            let first = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8", "display_name": "Ada", "device_name": "Ada's phone"])
            #expect(first.status == .ok)
            let session = try first.decode(SessionResponse.self)
            #expect(session.user.authProviders == ["invite"])
            #expect(session.user.displayName == "Ada")
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: session.accessToken)
            #expect(me.json["id"] as? String == session.user.id)

            let again = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8", "display_name": "Someone else"])
            let second = try again.decode(SessionResponse.self)
            #expect(second.user.id == session.user.id)
            #expect(second.user.displayName == "Ada", "a later redeem does not rename the account")

            let bob = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "bob-e0c6-55d1-9f3a"]).decode(SessionResponse.self)
            #expect(bob.user.id != session.user.id, "each code is its own account")
        }
        // Three sign-ins, three lines: the kernel audits each once (a provider records only its refusals).
        #expect(try h.audit(event: "sign_in").count == 3)
    }

    @Test func onlyAHashOfTheCodeIsStored() async throws {
        let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: Self.config)
        let id = try await h.test { client async throws in
            try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8"]).decode(SessionResponse.self).user.id
        }
        let stored = try FileManager.default.contentsOfDirectory(atPath: h.folder)
            .filter { $0.hasPrefix("journal") || $0.hasPrefix("snapshot") }
            .map { try String(contentsOfFile: h.folder + "/" + $0, encoding: .utf8) }.joined()
        #expect(stored.contains(id.uppercased()))
        #expect(!stored.contains("ada-7d2f-93ac-41b8"))
        #expect(stored.contains(Hex.encode(SHA256.hash("ada-7d2f-93ac-41b8"))))
    }

    @Test func aWrongCodeIsRefusedAuditedAndRateLimited() async throws {
        let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: Self.config)
        try await h.test { client async throws in
            for _ in 0..<5 {
                let wrong = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "guess-0000-0000"])
                #expect(wrong.status == .unauthorized)
                #expect(wrong.errorCode == "INVALID_INVITE")
            }
            let limited = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8"])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "RATE_LIMIT_EXCEEDED")
        }
        let audit = try String(contentsOfFile: h.folder + "/audit.jsonl", encoding: .utf8)
        #expect(audit.components(separatedBy: #""reason":"INVALID_INVITE""#).count - 1 == 5)
        #expect(!audit.contains("guess-0000-0000"), "a code is never written to the audit log")
    }

    @Test func badBodiesAreRefusedBeforeAnyCheck() async throws {
        let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: Self.config)
        try await h.test { client async throws in
            let missing = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["display_name": "Ada"])
            #expect(missing.status == .badRequest)
            #expect(missing.errorCode == "INVALID_REQUEST")
            let long = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": String(repeating: "x", count: 129)])
            #expect(long.errorCode == "INVALID_REQUEST")
            let control = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8", "display_name": "A\u{7}da"])
            #expect(control.errorCode == "INVALID_REQUEST")
            let device = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8", "platform": "\u{202E}soi"])
            #expect(device.errorCode == "INVALID_REQUEST")
        }
    }

    @Test func theServedSpecListsTheOperationOnlyWhenTheProviderRuns() async throws {
        let running = try await TestHarness.make(providers: [InviteCodeProvider.self], config: Self.config)
        let spec = try await running.test { client in String(buffer: try await client.execute(uri: "/openapi.yaml", method: .get).body) }
        #expect(spec.contains("/api/v1/auth/invite/redeem:"))
        #expect(spec.contains("operationId: redeemInviteCode"))
        #expect(spec.contains("InvalidInvite:"))

        let off = try await TestHarness.make(providers: [EmailProvider.self, InviteCodeProvider.self], config: #"{"providers":["email"]}"#)
        let without = try await off.test { client in String(buffer: try await client.execute(uri: "/openapi.yaml", method: .get).body) }
        #expect(!without.contains("/invite/"))
    }

    @Test func itsConfigurationIsValidatedLikeTheKernels() async throws {
        await #expect(throws: ConfigError("invite.codes must list at least one invite code")) {
            _ = try await TestHarness.make(providers: [InviteCodeProvider.self], config: #"{"providers":["invite"]}"#)
        }
        await #expect(throws: ConfigError("invite.codes must be 12 to 128 characters each")) {
            _ = try await TestHarness.make(providers: [InviteCodeProvider.self], config: #"{"providers":["invite"],"invite":{"codes":["short"]}}"#)
        }
        await #expect(throws: ConfigError("unknown configuration key invite.cods")) {
            _ = try await TestHarness.make(providers: [InviteCodeProvider.self], config: #"{"providers":["invite"],"invite":{"codes":["ada-7d2f-93ac-41b8"],"cods":1}}"#)
        }
    }

    /// The sign-in page, as a browser uses it: the invite form beside the other providers', a wrong
    /// code shown in words, a right one signed in (the session in the browser's cookie).
    @Test func theInviteFormOnTheSignInPage() async throws {
        let config = #"{"issuer":"https://localhost","providers":["invite"],"invite":{"codes":["ada-7d2f-93ac-41b8"]}}"#
        let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: config)
        try await h.test { client async throws in
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            #expect(try await browser.open("/login").text.contains("Invite code"))
            let wrong = try await browser.submit("/login/invite/redeem", ["code": "not-a-real-invite", "display_name": "Ada"])
            #expect(wrong.status == .unauthorized && wrong.text.contains("That invite code is not valid") && wrong.text.contains(#"value="Ada""#))
            let signedIn = try await browser.submit("/login/invite/redeem", ["code": "ada-7d2f-93ac-41b8", "display_name": "Ada"])
            #expect(signedIn.path == "/account" && signedIn.text.contains("Your account"))
            #expect(browser.cookie("__Host-authd") != nil)
        }
        #expect(try h.audit(event: "sign_in").count == 1)
        #expect(try h.audit(event: "sign_in_failed").count == 1)
    }

    /// The same page in German: the form's words and the wrong code's sentence from the provider's
    /// catalog, the page's own from the server's.
    @Test func theInviteFormInGerman() async throws {
        let config = #"{"issuer":"https://localhost","providers":["invite"],"invite":{"codes":["ada-7d2f-93ac-41b8"]}}"#
        let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: config)
        try await h.test { client async throws in
            let german = HarnessBrowser(client, origin: h.kernel.issuer, language: "de")
            let page = try await german.open("/login")
            #expect(page.text.contains(#"<html lang="de">"#) && page.text.contains("Einladungscode") && !page.text.contains("Invite code"))
            let wrong = try await german.submit("/login/invite/redeem", ["code": "not-a-real-invite"])
            #expect(wrong.status == .unauthorized && wrong.text.contains("Dieser Einladungscode ist ungültig."))
        }
    }
}
