@testable import AuthdCore
@testable import AuthdServer
@testable import AuthKernel
import AuthKernelTesting
import AuthStorage
import EmailProvider
import FileStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Testing

/// The second outside review's findings on the kernel's endpoints (contract §12), each shown on the
/// behaviour that was wrong: a leaked access token that could approve, approvals that outlived a
/// recovery, a page that wrote for every visitor, and credential changes that took a stale session.
struct SecondReviewFindingsTests {
    static let https = #"{"issuer":"https://auth.example.com","mail":{"transport":"outbox"}}"#
    /// Pages answer on the issuer's host: the harness's client asks for `localhost`.
    static let pages = #"{"issuer":"https://localhost","mail":{"transport":"outbox"}}"#

    // MARK: Recovery reaches everything pending (finding 1)

    enum Recovery: String, CaseIterable, Sendable { case adminEndsSessions, adminDisables, revokeAll }

    @Test(arguments: Recovery.allCases)
    func aDeviceApprovedBeforeARecoveryGetsNoSessionAfterIt(_ recovery: Recovery) async throws {
        let h = try await TestHarness.make()
        let key = try await ServiceKeys(store: h.server.store, clock: h.clock).create(name: "backend")
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let started = try await DeviceSignInTests.start(client)
            let deviceCode = try #require(started["device_code"] as? String), userCode = try #require(started["user_code"] as? String)
            #expect(try await client.send(.post, "/api/v1/auth/device/\(userCode)/approve", bearer: s.accessToken).status == .noContent)
            switch recovery {
            case .adminEndsSessions:
                #expect(try await AdminAPITests.admin(client, .delete, "users/\(s.user.id)/sessions", key: key).status == .noContent)
            case .adminDisables:
                #expect(try await AdminAPITests.admin(client, .patch, "users/\(s.user.id)", key: key, json: ["disabled": true]).status == .ok)
            case .revokeAll:  // what a password reset or change does
                try await h.kernel.sessions.revokeAll(of: try #require(UUID(uuidString: s.user.id)))
            }
            h.clock.advance(by: 6)
            let poll = try await DeviceSignInTests.poll(client, deviceCode)
            #expect(poll.status == .badRequest && DeviceSignInTests.oauthError(poll) == "access_denied")
            #expect(try await h.kernel.sessions.sessions(of: try #require(UUID(uuidString: s.user.id))).isEmpty)
        }
    }

    @Test func aDeviceApprovedWithNoRecoveryAfterStillSignsIn() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        let other = try await h.signIn("bo", email: "bo@example.com")
        try await h.test { client async throws in
            let started = try await DeviceSignInTests.start(client)
            let deviceCode = try #require(started["device_code"] as? String), userCode = try #require(started["user_code"] as? String)
            #expect(try await client.send(.post, "/api/v1/auth/device/\(userCode)/approve", bearer: s.accessToken).status == .noContent)
            // Another user's recovery is not this one's.
            try await h.kernel.sessions.revokeAll(of: try #require(UUID(uuidString: other.user.id)))
            h.clock.advance(by: 6)
            #expect(try await DeviceSignInTests.poll(client, deviceCode).status == .ok)
        }
    }

    // MARK: A leaked access token alone never approves (finding 6)

    @Test func approvingADeviceNeedsAFreshSessionOrItsOwnRefreshToken() async throws {
        let h = try await TestHarness.make(config: #"{"mail":{"transport":"outbox"},"tokens":{"refresh_reuse_grace":10}}"#)
        let signedIn = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            h.clock.advance(by: 601)  // no longer fresh
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": signedIn.refreshToken])
            let older = signedIn.refreshToken
            let s = try refreshed.decode(SessionResponse.self)
            let code = { () async throws -> String in try #require(try await DeviceSignInTests.start(client)["user_code"] as? String) }

            // The access token alone: refused, and the code stays pending.
            let first = try await code()
            let bare = try await client.send(.post, "/api/v1/auth/device/\(first)/approve", bearer: s.accessToken)
            #expect(bare.status == .forbidden && bare.errorCode == "REAUTH_REQUIRED")
            let bareBody = try await client.send(.post, "/api/v1/auth/device/\(first)/approve", json: [:], bearer: s.accessToken)
            #expect(bareBody.errorCode == "REAUTH_REQUIRED")
            // Another session's refresh token is no proof.
            let stranger = try await h.signIn("someone-else", email: "eve@example.com")
            #expect(try await client.send(.post, "/api/v1/auth/device/\(first)/approve", json: ["refresh_token": stranger.refreshToken], bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
            // The session's current token proves it, and is not rotated by the approval.
            #expect(try await client.send(.post, "/api/v1/auth/device/\(first)/approve", json: ["refresh_token": s.refreshToken], bearer: s.accessToken).status == .noContent)
            // Its predecessor within the grace proves it too (two requests of one device raced).
            #expect(try await client.send(.post, "/api/v1/auth/device/\(try await code())/approve", json: ["refreshToken": older], bearer: s.accessToken).status == .noContent)
            // After the grace, the predecessor is reuse: the session ends.
            h.clock.advance(by: 11)
            let reused = try await client.send(.post, "/api/v1/auth/device/\(try await code())/approve", json: ["refresh_token": older], bearer: s.accessToken)
            #expect(reused.status == .unauthorized && reused.errorCode == "REFRESH_TOKEN_REUSED")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken]).status == .unauthorized)
        }
    }

    @Test func aFreshSessionApprovesWithItsAccessTokenAlone() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let code = try #require(try await DeviceSignInTests.start(client)["user_code"] as? String)
            #expect(try await client.send(.post, "/api/v1/auth/device/\(code)/approve", bearer: s.accessToken).status == .noContent)
        }
    }

    // MARK: Credential changes take a fresh session (finding 11)

    @Test func deletingAnAPIKeyOrEndingItsSessionOrTheAccountNeedsAFreshSession() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let created = try await client.send(.post, "/api/v1/auth/api-keys", json: ["name": "NAS"], bearer: s.accessToken)
            let id = try #require(created.json["id"] as? String)
            h.clock.advance(by: 601)
            #expect(try await client.send(.delete, "/api/v1/auth/api-keys/\(id)", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
            #expect(try await client.send(.delete, "/api/v1/auth/sessions/\(id)", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
            #expect(try await client.send(.delete, "/api/v1/auth/account", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .ok, "nothing was deleted")
            #expect(try await h.kernel.sessions.apiKeys(of: try #require(UUID(uuidString: s.user.id))).count == 1)
            // Ending an ordinary session (another device's) stays possible with a stale one.
            _ = try await h.signIn(email: "ada@example.com", device: "phone")
            let listed = try await client.send(.get, "/api/v1/auth/sessions", bearer: s.accessToken).json["sessions"] as? [[String: Any]] ?? []
            let phone = try #require(listed.first { $0["device_name"] as? String == "phone" }?["id"] as? String)
            #expect(try await client.send(.delete, "/api/v1/auth/sessions/\(phone)", bearer: s.accessToken).status == .noContent)
            // Fresh again: all three work.
            let again = try await h.signIn(email: "ada@example.com")
            #expect(try await client.send(.delete, "/api/v1/auth/api-keys/\(id)", bearer: again.accessToken).status == .noContent)
            #expect(try await client.send(.delete, "/api/v1/auth/account", bearer: again.accessToken).status == .noContent)
        }
    }

    @Test func anAnonymousUserWithNothingLinkedDeletesItsAccountWithAStaleToken() async throws {
        let h = try await TestHarness.make()
        let user = try await h.kernel.users.createAnonymous()
        let s = try await h.kernel.sessions.startSession(user, amr: ["anonymous"], device: .none)
        try await h.test { client async throws in
            h.clock.advance(by: 3600)
            #expect(try await client.send(.delete, "/api/v1/auth/account", bearer: s.accessToken).status == .noContent)
        }
    }

    // MARK: Logout with a Bearer (§12)

    @Test func logoutWithABearerAnswers204WhateverTheBodyHolds() async throws {
        let h = try await TestHarness.make()
        try await h.test { client async throws in
            for body in ["{}", #"{"refresh_token":"not this session's"}"#, "not json", ""] {
                let s = try await h.signIn(email: "ada@example.com")
                let r = try await client.send(.post, "/api/v1/auth/logout", raw: body, bearer: s.accessToken)
                #expect(r.status == .noContent, "\(body)")
                #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken]).status == .unauthorized)
            }
        }
    }

    // MARK: The sign-in page stores nothing for a visitor who has not posted (finding 4)

    @Test func pagesOpenedWithoutPostingWriteNothingAndAreLimitedPerNetwork() async throws {
        let folder = temporaryFolder()
        let store = CountingStore(try await JournalStore.open(folder: folder, logger: Logger(label: "test")))
        let h = try await TestHarness.make(providers: [EmailProvider.self], config: Self.pages, folder: folder, store: store)
        try await h.test { client async throws in
            let before = store.writeCount
            // /device without a browser session sends the person to /login, writing nothing.
            let device = try await client.execute(uri: "/device?user_code=ABCD-EFGH", method: .get)
            #expect(device.status == .found && device.headers[.location]?.hasPrefix("/login?return_to=%2Fdevice") == true)
            var cookies: [String] = []
            for _ in 0..<LoginRoutes.pagesPerNetwork.limit {
                let page = try await client.execute(uri: "/login", method: .get)
                #expect(page.status == .ok)
                cookies.append(try #require(page.headers[.setCookie]))
            }
            #expect(store.writeCount == before, "no write for a page nobody posted")
            #expect(Set(cookies).count == cookies.count)
            let over = try await client.execute(uri: "/login", method: .get)
            #expect(over.status == .tooManyRequests)
            h.clock.advance(by: Double(LoginRoutes.pagesPerNetwork.window))
            #expect(try await client.execute(uri: "/login", method: .get).status == .ok)
        }
    }

    @Test func theSealedCookieCarriesTheFirstPostAndATamperedOneDoesNot() async throws {
        let h = try await TestHarness.make(providers: [EmailProvider.self], config: Self.pages)
        try await h.test { client async throws in
            let page = try await client.execute(uri: "/login", method: .get)
            let cookie = try #require(page.headers[.setCookie]?.split(separator: ";").first.map(String.init))
            let csrf = try #require(Self.csrf(in: String(buffer: page.body)))
            let tampered = cookie.dropLast() + (cookie.last == "A" ? "B" : "A")
            #expect(try await Self.postSend(client, cookie: String(tampered), csrf: csrf, email: "ada@example.com").status == .badRequest)
            #expect(try await Self.postSend(client, cookie: cookie, csrf: "wrong", email: "ada@example.com").status == .forbidden)
            let posted = try await Self.postSend(client, cookie: cookie, csrf: csrf, email: "ada@example.com")
            #expect(posted.status == .ok && String(buffer: posted.body).contains("ada@example.com"), "the code step, for the address posted")
        }
    }

    // MARK: The sign-in page's first post does the same work for unknown and known addresses (finding 5)

    @Test func startingWithAnUnknownAddressDoesTheSameWorkAsAKnownOne() async throws {
        let folder = temporaryFolder()
        let store = CountingStore(try await JournalStore.open(folder: folder, logger: Logger(label: "test")))
        let h = try await TestHarness.make(providers: [EmailProvider.self], config: Self.pages, folder: folder, store: store)
        _ = try await h.signIn(email: "known@example.com")
        try await h.test { client async throws in
            func work(_ email: String) async throws -> (writes: Int, jobs: Int) {
                let page = try await client.execute(uri: "/login", method: .get)
                let cookie = try #require(page.headers[.setCookie]?.split(separator: ";").first.map(String.init))
                let csrf = try #require(Self.csrf(in: String(buffer: page.body)))
                let writes = store.writeCount, jobs = h.kernel.jobs.enqueuedCount
                #expect(try await Self.postSend(client, cookie: cookie, csrf: csrf, email: email).status == .ok)
                // The mail job runs after the answer (a decoy too) and is done with a write: counted
                // once it has run, on both sides alike.
                for _ in 0..<6000 where try await !h.kernel.jobs.pending().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
                return (store.writeCount - writes, h.kernel.jobs.enqueuedCount - jobs)
            }
            let known = try await work("known@example.com")
            let unknown = try await work("nobody@example.com")
            #expect(known.writes == unknown.writes && known.jobs == unknown.jobs, "known \(known), unknown \(unknown)")
        }
        // Signing in by mailed code is also how an account is made: both addresses get their code.
        #expect(try h.mail().map(\.to).sorted() == ["known@example.com", "nobody@example.com"])
    }

    static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func postSend(_ client: HarnessClient, cookie: String, csrf: String, email: String) async throws -> HarnessResponse {
        try await client.execute(
            uri: "/login/email/send", method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded", .origin: "https://localhost", .cookie: cookie],
            body: ByteBuffer(string: "csrf=\(csrf)&email=\(email)"))
    }
}

/// `authd check` lists what providers doubt in the settings and fails on it.
struct ConfigurationProblemsTests {
    struct Doubtful: AuthProvider {
        static let id = "doubtful"
        init(kernel: Kernel, config: inout ConfigSection) throws {
            kernel.configurationProblems.report("doubtful.setting is not what it should be")
        }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
    }

    @Test func checkListsEachProblemAndExitsNonZero() async throws {
        let h = try await TestHarness.make(providers: [Doubtful.self], config: #"{"providers":["doubtful"],"mail":{"transport":"outbox"}}"#)
        let output = await (try AdminOperations(server: h.server, dataFolder: h.folder)).run(.check)
        #expect(output.exitCode == 1 && output.text.contains("problem       doubtful.setting is not what it should be"))
        let clean = try await TestHarness.make()
        #expect(await (try AdminOperations(server: clean.server, dataFolder: clean.folder)).run(.check).exitCode == 0)
        await h.server.close()
        await clean.server.close()
    }
}
