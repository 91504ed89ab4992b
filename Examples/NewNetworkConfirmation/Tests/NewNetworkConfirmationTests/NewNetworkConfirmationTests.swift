import AuthKernel
import AuthKernelTesting
import EmailProvider
import Foundation
import HTTPTypes
import NewNetworkConfirmation
import Testing

/// Email sign-in as the first factor, over sockets from 127.0.0.1 as a trusted proxy, so
/// `X-Forwarded-For` says which network each sign-in comes from.
struct NewNetworkConfirmationTests {
    static func harness(remember: Int = 10) async throws -> TestHarness {
        try await TestHarness.make(
            providers: [EmailProvider.self, NewNetworkConfirmation.self],
            config: """
                {"providers":["email","new-network"],"new-network":{"remember":\(remember)},"mail":{"transport":"outbox"},
                 "http":{"trusted_proxies":["127.0.0.1/32"]}}
                """)
    }

    /// Signs `email` in with an emailed code from `ip`: the session (200) or the challenge (202).
    static func signIn(_ h: TestHarness, _ client: HarnessClient, _ email: String, from ip: String) async throws -> HarnessResponse {
        h.clock.advance(by: 61)  // past the email provider's resend interval
        let from: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: ip]
        #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": email], headers: from).status == .ok)
        let code = try #require(try h.mail(to: email).last?.code)
        return try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": email, "code": code], headers: from)
    }

    /// Answers a challenge with the code mailed for it.
    static func confirm(_ h: TestHarness, _ client: HarnessClient, _ held: HarnessResponse, _ email: String, code: String? = nil) async throws -> HarnessResponse {
        let challenge = try #require(held.json["challenge"] as? String)
        let mail = try #require(try h.mail(to: email).last)
        #expect(mail.subject.hasPrefix("Your authd sign-in code") && mail.text.contains("a network it has not used before"))
        return try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "network_code": code ?? mail.code!])
    }

    static func amr(_ response: HarnessResponse) throws -> [String] {
        let part = try #require(response.accessToken?.split(separator: ".").dropFirst().first)
        let data = try #require(Data(base64URL: String(part)))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["amr"] as? [String] ?? []
    }

    @Test func aNewIPv4NetworkNeedsTheMailedCodeOnceThenIsKnown() async throws {
        let h = try await Self.harness()
        try await h.test(overSockets: true) { client async throws in
            #expect(try await Self.signIn(h, client, "ada@example.com", from: "203.0.113.5").status == .ok, "the first network is trusted")
            #expect(try await Self.signIn(h, client, "ada@example.com", from: "203.0.113.77").status == .ok, "same /24")

            let held = try await Self.signIn(h, client, "ada@example.com", from: "198.51.100.9")
            #expect(held.status == .accepted)
            #expect(held.json["factors"] as? [String] == ["network_code"])
            let wrong = try await Self.confirm(h, client, held, "ada@example.com", code: "000000x")
            #expect(wrong.status == .unauthorized && wrong.errorCode == "INVALID_CODE")
            let right = try await Self.confirm(h, client, held, "ada@example.com")
            #expect(right.status == .ok)
            #expect(try Self.amr(right) == ["email", "network_code", "mfa"])

            #expect(try await Self.signIn(h, client, "ada@example.com", from: "198.51.100.200").status == .ok, "now known")
            #expect(try await Self.signIn(h, client, "ada@example.com", from: "203.0.113.1").status == .ok, "still known")
        }
    }

    @Test func anIPv6NetworkIsItsSlash64() async throws {
        let h = try await Self.harness()
        try await h.test(overSockets: true) { client async throws in
            #expect(try await Self.signIn(h, client, "bo@example.com", from: "2001:db8:1:2::5").status == .ok)
            #expect(try await Self.signIn(h, client, "bo@example.com", from: "2001:db8:1:2:ffff::1").status == .ok)
            #expect(try await Self.signIn(h, client, "bo@example.com", from: "2001:db8:1:3::5").status == .accepted)
        }
    }

    @Test func aCodeAnswersOnlyItsOwnChallenge() async throws {
        let h = try await Self.harness()
        try await h.test(overSockets: true) { client async throws in
            _ = try await Self.signIn(h, client, "cy@example.com", from: "192.0.2.1")
            let first = try await Self.signIn(h, client, "cy@example.com", from: "198.51.100.1")
            let firstCode = try #require(try h.mail(to: "cy@example.com").last?.code)
            let second = try await Self.signIn(h, client, "cy@example.com", from: "198.51.100.1")
            let crossed = try await client.send(
                .post, "/api/v1/auth/mfa/verify", json: ["challenge": second.json["challenge"] as! String, "network_code": firstCode])
            #expect(crossed.errorCode == "INVALID_CODE")
            #expect(try await client.send(
                .post, "/api/v1/auth/mfa/verify", json: ["challenge": first.json["challenge"] as! String, "network_code": firstCode]).status == .ok)
        }
    }

    @Test func onlyTheLastConfirmedNetworksAreRememberedAsKeyedHashes() async throws {
        let h = try await Self.harness(remember: 2)
        try await h.test(overSockets: true) { client async throws in
            _ = try await Self.signIn(h, client, "di@example.com", from: "192.0.2.1")
            for ip in ["198.51.100.1", "203.0.113.1"] {
                let held = try await Self.signIn(h, client, "di@example.com", from: ip)
                #expect(try await Self.confirm(h, client, held, "di@example.com").status == .ok)
            }
            #expect(try await Self.signIn(h, client, "di@example.com", from: "203.0.113.9").status == .ok)
            #expect(try await Self.signIn(h, client, "di@example.com", from: "192.0.2.1").status == .accepted, "forgotten: only 2 are kept")
        }
        let user = try #require(try await h.kernel.users.user(email: "di@example.com"))
        let known = try #require(user.secret("new_network.known", as: [String].self))
        #expect(known.count == 2 && known.allSatisfy { $0.count == 64 })
        let journal = try FileManager.default.contentsOfDirectory(atPath: h.folder)
            .filter { $0.hasPrefix("journal") || $0.hasPrefix("snapshot") }
            .map { try String(contentsOfFile: h.folder + "/" + $0, encoding: .utf8) }.joined()
        #expect(journal.contains(known[0]))
        #expect(!journal.contains("198.51.100") && !journal.contains("203.0.113"), "no address is stored")
    }
}

extension Data {
    init?(base64URL s: String) {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        self.init(base64Encoded: t)
    }
}
