@testable import ApprovalProvider
import AuthKernel
import AuthKernelTesting
import AuthStorage
import EmailProvider
import FileStore
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Testing

/// Sign-in approved from another device (contract §15), through the routes on the injected clock.
struct ApprovalSignInTests {
    static let config = #"{"mail":{"transport":"outbox"},"providers":["email","approval"],"email":{"resend_interval":0}}"#

    func harness(
        clock: ManualClock = ManualClock(), store: (any AuthStore)? = nil, folder: String? = nil, config: String = Self.config
    ) async throws -> TestHarness {
        try await TestHarness.make(providers: [EmailProvider.self, ApprovalProvider.self], config: config, folder: folder, clock: clock, store: store)
    }

    /// An email sign-in the way an app does it, the code read from the mail's text.
    func signedIn(_ client: HarnessClient, _ h: TestHarness, _ email: String = "ada@example.com") async throws -> HarnessResponse {
        #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": email]).status == .ok)
        let code = try #require(try h.mail(to: email).last?.code)
        return try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": email, "code": code, "device_name": "Ada's phone"])
    }

    func start(_ client: HarnessClient, _ email: String = "ada@example.com") async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/approval/start", json: ["email": email, "device_name": "Ada's laptop", "platform": "macos"])
    }

    func complete(_ client: HarnessClient, _ started: HarnessResponse, token: String? = nil) async throws -> HarnessResponse {
        let id = started.json["request_id"] as? String ?? ""
        return try await client.send(
            .post, "/api/v1/auth/approval/\(id)/complete", json: ["request_token": token ?? started.json["request_token"] as? String ?? ""])
    }

    func approve(_ client: HarnessClient, _ started: HarnessResponse, as session: HarnessResponse, code: String? = nil) async throws -> HarnessResponse {
        let id = started.json["request_id"] as? String ?? ""
        return try await client.send(
            .post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": code ?? started.json["match_code"] as? String ?? ""],
            bearer: session.accessToken)
    }

    static func claims(_ token: String?) throws -> [String: Any] {
        let part = try #require(token?.split(separator: ".").dropFirst().first)
        let bytes = try #require(Base64URL.decode(String(part)))
        let object = try JSONSerialization.jsonObject(with: Data(bytes))
        return try #require(object as? [String: Any])
    }

    @Test func aNewDeviceSignsInWithTheNumberTypedOnASignedInOne() async throws {
        let clock = ManualClock()
        let h = try await harness(clock: clock)
        try await h.test { client in
            let phone = try await signedIn(client, h)
            #expect(phone.status == .ok)
            clock.advance(by: 100)
            let started = try await start(client)
            #expect(started.status == .ok)
            #expect(Set(started.json.keys) == ["request_id", "request_token", "match_code", "expires_in", "interval"])
            let match = try #require(started.json["match_code"] as? String)
            #expect(match.count == 2 && match.allSatisfy(\.isNumber))
            #expect(started.json["expires_in"] as? Int == 120 && started.json["interval"] as? Int == 2)

            let list = try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken)
            let item = try #require((list.json["approvals"] as? [[String: Any]])?.first)
            #expect(item["kind"] as? String == "sign_in" && item["device_name"] as? String == "Ada's laptop" && item["platform"] as? String == "macos")
            #expect(item["network"] is String && item["match_code"] == nil)

            #expect(try await complete(client, started).errorCode == "PENDING")
            #expect(try await approve(client, started, as: phone).status == .noContent)
            let laptop = try await complete(client, started)
            #expect(laptop.status == .ok)
            let claims = try Self.claims(laptop.accessToken)
            #expect(claims["amr"] as? [String] == ["approval"])
            #expect(claims["auth_time"] as? Int == (try Self.claims(phone.accessToken))["auth_time"] as? Int, "the approving session's sign-in")
            #expect(try await complete(client, started).errorCode == "INVALID_STATE", "collected once")
            // The new session is fresh as of the approver's sign-in: 100 s old here.
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: laptop.accessToken).status == .ok)
        }
    }

    @Test func oneWrongNumberDeniesAndOnlyTheRequesterCompletes() async throws {
        let h = try await harness()
        try await h.test { client in
            let phone = try await signedIn(client, h)
            let started = try await start(client)
            #expect(try await complete(client, started, token: "not-the-token").errorCode == "NOT_FOUND")
            let match = try #require(started.json["match_code"] as? String)
            let wrong = match == "00" ? "01" : "00"
            let refused = try await approve(client, started, as: phone, code: wrong)
            #expect(refused.status == .unauthorized && refused.errorCode == "INVALID_CODE")
            #expect(((refused.json["error"] as? [String: Any])?["details"] as? [String: Any])?["attempts_remaining"] as? Int == 0)
            #expect(try await approve(client, started, as: phone).errorCode == "INVALID_STATE")
            #expect(try await complete(client, started).errorCode == "DENIED")
        }
    }

    @Test func aRequestExpiresOnTheClockAndADecoyLooksTheSame() async throws {
        let clock = ManualClock()
        let folder = NSTemporaryDirectory() + "authd-approval-" + UUID().uuidString
        let store = CountingStore(try await JournalStore.open(folder: folder, logger: Logger(label: "test")))
        let h = try await harness(clock: clock, store: store, folder: folder)
        try await h.test { client in
            let phone = try await signedIn(client, h)
            func work(_ email: String) async throws -> (response: HarnessResponse, writes: Int, jobs: Int) {
                let writes = store.writeCount, jobs = h.kernel.jobs.enqueuedCount
                let started = try await start(client, email)
                for _ in 0..<6000 where try await !h.kernel.jobs.pending().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
                return (started, store.writeCount - writes, h.kernel.jobs.enqueuedCount - jobs)
            }
            let known = try await work("ada@example.com")
            let unknown = try await work("nobody@example.com")
            #expect(Set(known.response.json.keys) == Set(unknown.response.json.keys))
            #expect(known.writes == unknown.writes && known.jobs == unknown.jobs && known.jobs == 1, "known \(known.writes)/\(known.jobs), unknown \(unknown.writes)/\(unknown.jobs)")
            #expect(try await complete(client, unknown.response).errorCode == "PENDING")
            clock.advance(by: 121)
            #expect(try await complete(client, known.response).errorCode == "EXPIRED")
            #expect(try await complete(client, unknown.response).errorCode == "EXPIRED")
            #expect(try await approve(client, known.response, as: phone).errorCode == "INVALID_STATE")
        }
    }

    @Test func aResetBetweenApprovalAndCompletionRefusesTheSession() async throws {
        let h = try await harness()
        try await h.test { client in
            let phone = try await signedIn(client, h)
            let started = try await start(client)
            #expect(try await approve(client, started, as: phone).status == .noContent)
            let user = try #require(try await h.kernel.users.user(email: "ada@example.com"))
            // What a password reset, a disable or the admin ending every session does.
            try await h.kernel.sessions.revokeAll(of: user.id)
            #expect(try await complete(client, started).errorCode == "DENIED")
        }
    }

    @Test func aUserNameNamesTheAccountAsAnAddressDoes() async throws {
        let h = try await harness()
        try await h.test { client in
            let phone = try await signedIn(client, h)
            let user = try #require(try await h.kernel.users.user(email: "ada@example.com"))
            _ = try await h.kernel.users.update(user.id) { $0.username = "ada_l" }
            let started = try await client.send(.post, "/api/v1/auth/approval/start", json: ["username": "Ada_L", "device_name": "tv"])
            #expect(started.status == .ok)
            #expect(try await approve(client, started, as: phone).status == .noContent)
            let tv = try await complete(client, started)
            #expect(tv.status == .ok && (tv.json["user"] as? [String: Any])?["id"] as? String == user.id.lowercased)
            #expect(try await client.send(.post, "/api/v1/auth/approval/start", json: ["username": "no such name!"]).status == .badRequest)
        }
    }

    @Test func aResetRacingAnApprovalNeverLetsTheNewDeviceIn() async throws {
        // Whichever lands first: the approval then the reset (the collection is refused), or the
        // reset then the approval (the approving session has ended). Many rounds, both orders.
        let h = try await harness()
        try await h.test { client in
            for round in 0..<12 {
                let email = "race\(round)@example.com"
                let phone = try await signedIn(client, h, email)
                let user = try #require(try await h.kernel.users.user(email: email))
                let started = try await start(client, email)
                async let approved = approve(client, started, as: phone)
                async let reset: Void = h.kernel.sessions.revokeAll(of: user.id)
                _ = try await (approved, reset)
                let laptop = try await complete(client, started)
                #expect(laptop.status != .ok, "round \(round): \(laptop.status)")
                #expect(["DENIED", "PENDING"].contains(laptop.errorCode ?? ""), "round \(round): \(laptop.errorCode ?? "")")
            }
        }
    }

    @Test func notMeMakesThatNetworksRequestsDecoysQuietsPushesAndTellsTheOwner() async throws {
        let h = try await harness()
        try await h.test { client in
            let phone = try await signedIn(client, h)
            let user = try #require(try await h.kernel.users.user(email: "ada@example.com"))
            let first = try await start(client)
            let id = try #require(first.json["request_id"] as? String)
            let pushing = await h.kernel.approvals.pushes(kind: "sign_in", userID: user.id)
            #expect(pushing)
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(id)/deny", json: ["reason": "elsewhere"], bearer: phone.accessToken).status == .badRequest)
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(id)/deny", json: ["reason": "not_me"], bearer: phone.accessToken).status == .noContent)
            #expect(try await complete(client, first).errorCode == "DENIED")
            let notice = try #require(try h.mail(to: "ada@example.com").last)
            #expect(notice.subject.contains("sign-in") && notice.text.contains("Ada's laptop") && notice.text.contains("it was not you"))
            let pushes = await h.kernel.approvals.pushes(kind: "sign_in", userID: user.id)
            #expect(!pushes, "pushes quiet")
            let second = try await start(client)
            #expect(second.status == .ok && Set(second.json.keys) == Set(first.json.keys))
            let listed = try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken)
            #expect((listed.json["approvals"] as? [[String: Any]])?.isEmpty == true, "a decoy: nobody is asked")
            #expect(try await approve(client, second, as: phone).errorCode == "NOT_FOUND")
            #expect(try h.audit(event: "approval_sign_in_denied").count == 1)
        }
    }

    @Test func anApprovalLandingAfterItsSessionEndedIsRefused() async throws {
        // The Bearer was checked when the request arrived; a reset ended the session before the
        // approval was written (a slow body): the write itself refuses it.
        let h = try await harness()
        try await h.test { client in
            _ = try await signedIn(client, h)
            let user = try #require(try await h.kernel.users.user(email: "ada@example.com"))
            let phone = try #require(try await h.kernel.sessions.sessions(of: user.id).first)
            let started = try await start(client)
            try await h.kernel.sessions.revokeAll(of: user.id)
            let id = try #require(started.json["request_id"] as? String), match = try #require(started.json["match_code"] as? String)
            await #expect(throws: AuthError.unauthorized) { try await h.kernel.approvals.approve(id: id, userID: user.id, matchCode: match, by: phone) }
            #expect(try await complete(client, started).errorCode == "PENDING")
        }
    }

    @Test func notMeNeedsTheSessionsProofAndDeniesTheOthersFromThatNetwork() async throws {
        let clock = ManualClock()
        let config = #"{"mail":{"transport":"outbox"},"providers":["email","approval"],"auth":{"fresh_auth":60},"approval":{"ttl":600}}"#
        let h = try await harness(clock: clock, config: config)
        try await h.test { client in
            let phone = try await signedIn(client, h)
            let first = try await start(client), second = try await start(client)
            clock.advance(by: 61)  // past auth.fresh_auth: the access token alone is not enough
            let id = try #require(first.json["request_id"] as? String)
            let stale = try await client.send(.post, "/api/v1/auth/approvals/\(id)/deny", json: ["reason": "not_me"], bearer: phone.accessToken)
            #expect(stale.errorCode == "REAUTH_REQUIRED")
            #expect(try h.mail(to: "ada@example.com").count == 1, "only the sign-in code: no notice, nothing blocked")
            let refresh = try #require(phone.json["refresh_token"] as? String)
            let proven = try await client.send(
                .post, "/api/v1/auth/approvals/\(id)/deny", json: ["reason": "not_me", "refresh_token": refresh], bearer: phone.accessToken)
            #expect(proven.status == .noContent)
            #expect(try await complete(client, second).errorCode == "DENIED", "the same stranger's other request")
            let denials = try h.audit(event: "approval_sign_in_denied").map { $0["reason"] as? String }
            #expect(denials.contains("not_me"))
        }
    }

    @Test func anAccountNamedTwoWaysHasOneSetOfLimitsAndAWrongNumberIsAudited() async throws {
        let h = try await harness()
        try await h.test { client in
            let phone = try await signedIn(client, h)
            let user = try #require(try await h.kernel.users.user(email: "ada@example.com"))
            _ = try await h.kernel.users.update(user.id) { $0.username = "ada_l" }
            var starts: [HarnessResponse] = []
            for _ in 0..<3 { starts.append(try await start(client)) }
            #expect(starts.allSatisfy { $0.status == .ok })
            let byName = try await client.send(.post, "/api/v1/auth/approval/start", json: ["username": "ada_l"])
            #expect(byName.status == .ok, "answered as any start")
            let listed = try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken)
            #expect((listed.json["approvals"] as? [[String: Any]])?.count == 3, "but the account's devices are asked three times, not four")
            let match = try #require(starts[0].json["match_code"] as? String)
            #expect(try await approve(client, starts[0], as: phone, code: match == "00" ? "01" : "00").errorCode == "INVALID_CODE")
            let audited = try h.audit(event: "approval_sign_in_denied").map { $0["reason"] as? String }
            #expect(audited == ["wrong_match_code"] || audited.contains("wrong_match_code"))
        }
    }

    @Test func startsAreLimitedPerIdentifierKnownOrNot() async throws {
        let h = try await harness()
        try await h.test { client in
            _ = try await signedIn(client, h)
            for email in ["ada@example.com", "nobody@example.com"] {
                for _ in 0..<3 { #expect(try await start(client, email).status == .ok) }
                let fourth = try await start(client, email)
                #expect(fourth.status == .tooManyRequests && fourth.retryAfter != nil, "\(email)")
            }
            #expect(try await client.send(.post, "/api/v1/auth/approval/start", json: ["email": "a@example.com", "username": "ada"]).status == .badRequest)
            #expect(try await client.send(.post, "/api/v1/auth/approval/start", json: ["device_name": "x"]).status == .badRequest)
            #expect(try await client.send(.post, "/api/v1/auth/approval/start", json: ["email": "not an address"]).errorCode == "INVALID_EMAIL")
        }
    }

    @Test func twoApproversAtOnceApproveOnceAndConcurrentCompletionsGiveOneSession() async throws {
        let h = try await harness()
        try await h.test { client in
            let phone = try await signedIn(client, h)
            let tablet = try await signedIn(client, h)
            let started = try await start(client)
            let approvals = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for approver in [phone, tablet] { group.addTask { try await approve(client, started, as: approver).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(approvals.sorted { $0.code < $1.code } == [.noContent, .conflict])
            let completions = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<8 { group.addTask { try await complete(client, started).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(completions.filter { $0 == .ok }.count == 1 && completions.filter { $0 == .conflict }.count == 7)
        }
    }

    /// A second factor every account has here, so the approval is offered beside it.
    struct CodeFactor: SecondFactor {
        var name: String { "code" }
        func enrollments(for user: UserRecord) -> [SecondFactorEnrollment] { [SecondFactorEnrollment(type: "code", createdAt: Date(timeIntervalSince1970: 0))] }
        func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool { answer == .string("right") }
    }
    struct DemandCode: SignInPolicy {
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision { .requireSecondFactor(["code"]) }
    }

    @Test func asASecondFactorAPendingAnswerSpendsNothing() async throws {
        let h = try await harness()
        try await h.test { client in
            let phone = try await signedIn(client, h)
            h.kernel.signInHooks.register(CodeFactor())
            h.kernel.signInHooks.register(DemandCode())
            let held = try await signedIn(client, h)
            #expect(held.status == .accepted)
            #expect(Set(held.json["factors"] as? [String] ?? []) == ["code", "approval"])
            let challenge = try #require(held.json["challenge"] as? String)
            let asked = try await client.send(.post, "/api/v1/auth/mfa/approval", json: ["challenge": challenge])
            #expect(asked.status == .ok && asked.json["request_token"] == nil)
            let id = try #require(asked.json["request_id"] as? String)
            // More asks than the five wrong answers that kill a challenge: none is one.
            for _ in 0..<7 {
                #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "approval": id]).errorCode == "PENDING")
            }
            #expect(try await approve(client, asked, as: phone).status == .noContent)
            let done = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "approval": id])
            #expect(done.status == .ok)
            let amr = try Self.claims(done.accessToken)["amr"] as? [String]
            #expect(amr?.contains("approval") == true && amr?.first == "email", "\(amr ?? [])")
        }
    }

    @Test func withoutAnotherFullSessionTheApprovalIsNotOffered() async throws {
        let h = try await harness()
        try await h.test { client in
            h.kernel.signInHooks.register(CodeFactor())
            h.kernel.signInHooks.register(DemandCode())
            let held = try await signedIn(client, h)
            #expect(held.json["factors"] as? [String] == ["code"])
            let challenge = try #require(held.json["challenge"] as? String)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/approval", json: ["challenge": challenge]).status == .badRequest)
        }
    }
}

/// The approval on authd's pages: the address, two digits, a wait the page's script asks about,
/// and the browser signed in once a signed-in device typed them.
struct ApprovalPageTests {
    static let config = #"{"issuer":"https://localhost","mail":{"transport":"outbox"},"providers":["email","approval"],"email":{"resend_interval":0}}"#

    @Test func aBrowserSignsInWithNothingTypedButTheAddress() async throws {
        let clock = ManualClock()
        let h = try await TestHarness.make(providers: [EmailProvider.self, ApprovalProvider.self], config: Self.config, clock: clock)
        try await h.test { client in
            let app = ApprovalSignInTests()
            let phone = try await app.signedIn(client, h)
            clock.advance(by: 30)
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            let login = try await browser.open("/login?return_to=/account")
            #expect(login.text.contains("Approve from another device") && login.text.contains(#"formaction="/login/approval/start""#))
            let wait = try await browser.submit("/login/approval/start", ["email": "ada@example.com"])
            #expect(wait.status == .ok && wait.text.contains(#"<script src="/assets/poll.js" defer></script>"#))
            let match = try #require(wait.text.firstMatch(of: /id="approval-match-code"[^>]*>(\d\d)</)).1
            #expect(try await browser.submit("/login/approval/status", [:]).status == .accepted, "the script waits")
            let early = try await browser.submit("/login/approval/check", [:])
            #expect(early.status == .badRequest && early.text.contains("Not approved yet"), "no script: the button says so")

            let listed = try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken)
            let item = try #require((listed.json["approvals"] as? [[String: Any]])?.first)
            #expect(item["device_name"] as? String == "A web browser" && item["platform"] as? String == "web")
            let id = try #require(item["id"] as? String)
            #expect(
                try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": String(match)], bearer: phone.accessToken).status
                    == .noContent)
            #expect(try await browser.submit("/login/approval/status", [:]).status == .ok, "the script goes on")
            let signedIn = try await browser.submit("/login/approval/check", [:])
            #expect(signedIn.path == "/account" && signedIn.status == .ok)
            let user = try #require(try await h.kernel.users.user(email: "ada@example.com"))
            let sessions = try await h.kernel.sessions.sessions(of: user.id)
            let browserSession = try #require(sessions.first { $0.isBrowser })
            #expect(browserSession.amr == ["approval"] && browserSession.authTime != nil && browserSession.authTime! < browserSession.createdAt)
        }
    }

    @Test func itsFormsNeedTheIssuersOriginAndThePagesToken() async throws {
        let h = try await TestHarness.make(providers: [EmailProvider.self, ApprovalProvider.self], config: Self.config)
        try await h.test { client in
            let page = try await client.execute(uri: "/login", method: .get)
            let cookie = try #require(page.headers[.setCookie]?.split(separator: ";").first.map(String.init))
            let html = String(buffer: page.body)
            let csrf = try #require(html.firstMatch(of: /name="csrf" value="([^"]+)"/)).1
            func post(origin: String?, csrf: Substring) async throws -> HTTPResponse.Status {
                var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .cookie: cookie]
                if let origin { headers[.origin] = origin }
                return try await client.execute(
                    uri: "/login/approval/start", method: .post, headers: headers, body: ByteBuffer(string: "csrf=\(csrf)&email=ada%40example.com")
                ).status
            }
            #expect(try await post(origin: nil, csrf: csrf) == .forbidden)
            #expect(try await post(origin: "https://evil.example", csrf: csrf) == .forbidden)
            #expect(try await post(origin: h.kernel.issuer, csrf: "forged") == .forbidden)
            let approvals = try await h.kernel.approvals.pending(userID: UUID())
            #expect(approvals.isEmpty)
            #expect(try await post(origin: h.kernel.issuer, csrf: csrf) == .ok, "the same form, sent as the page sends it")
        }
    }

    @Test func theDevicePageSignsInThroughTheSamePage() async throws {
        let h = try await TestHarness.make(providers: [EmailProvider.self, ApprovalProvider.self], config: Self.config)
        try await h.test { client in
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            let page = try await browser.open("/device")
            #expect(page.path.hasPrefix("/login?return_to=") && page.text.contains("Approve from another device"))
            let denied = try await browser.submit("/login/approval/start", ["email": "nobody@example.com"])
            #expect(denied.status == .ok && denied.text.contains("approval-match-code"), "a decoy waits like any request")
        }
    }
}
