import AuthClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerProcessSupport
import Testing

/// The client library against a real `authd serve` on a random port.
@Suite(.serialized)
struct AuthClientTests {
    static let config = #"""
        {"mail":{"transport":"outbox"},"providers":["email","pin","password","apple"],
         "email":{"resend_interval":1},"password":{"resend_interval":1,"approval_ttl":600},
         "tokens":{"refresh_rate":{"limit":2,"window":60}},"device":{"interval":1},
         "apple":{"audiences":["com.example.app"],"jwks_url":"http://127.0.0.1:1/keys"}}
        """#

    final class Fixture: Sendable {
        let server: ServerProcess
        init(config: String = AuthClientTests.config) throws {
            server = ServerProcess(folder: try ServerProcess.makeFolder(config: config))
            try server.start()
        }
        func client() -> AuthClient { AuthClient(baseURL: URL(string: server.baseURL)!) }
        deinit { _ = server.stop() }

        /// Codes mailed so far.
        func mailCount() -> Int {
            ((try? String(contentsOfFile: server.folder + "/outbox.jsonl", encoding: .utf8)) ?? "").split(separator: "\n").count
        }

        /// Waits for mail number `count` (up to a minute: mail is sent after the answer) and returns its code.
        func code(after count: Int) async throws -> String {
            for _ in 0..<6000 {
                if mailCount() > count { return try server.lastMailedCode() }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw E2EError("no mail arrived")
        }

        func signInByEmail(_ client: AuthClient, _ email: String, device: String? = nil) async throws -> AuthSession {
            let before = mailCount()
            do {
                try await client.sendEmailCode(email)
            } catch AuthClientError.rateLimited(let retryAfter) {
                // The address's interval outlives its last sign-in (contract §12): a test signing
                // the same address in again waits it out, as a person would.
                try await Task.sleep(for: .seconds(retryAfter))
                try await client.sendEmailCode(email)
            }
            return try await client.verifyEmailCode(email: email, code: try await code(after: before), deviceName: device)
        }
    }

    @Test func emailSignInProfileSessionsAndLogout() async throws {
        let f = try Fixture()
        let client = f.client()
        #expect(try await client.providers() == ["email", "pin", "password", "apple"])
        let session = try await f.signInByEmail(client, "anna@example.com", device: "phone")
        #expect(session.user.email == "anna@example.com" && session.user.emailVerified)
        #expect(await client.isSignedIn)
        #expect(try await client.me().id == session.user.id)
        #expect(try await client.updateDisplayName("Anna").displayName == "Anna")
        #expect(try await client.updateDisplayName(nil).displayName == nil)
        let sessions = try await client.sessions()
        #expect(sessions.count == 1 && sessions[0].current && sessions[0].deviceName == "phone")
        let before = try await client.tokenStore.load()
        let refreshed = try await client.refresh()
        #expect(refreshed.refreshToken != before?.refreshToken && refreshed.expiresAt > Date())
        try await client.logout()
        #expect(await !client.isSignedIn)
        await #expect(throws: AuthClientError.notSignedIn) { try await client.me() }
    }

    @Test func errorsMirrorTheContractWithReadableMessages() async throws {
        // An hour between codes, so the second send is refused however long the first one took
        // (with the suite's one second, a slow machine let the interval pass between the two calls).
        let config = Self.config.replacingOccurrences(of: #""email":{"resend_interval":1}"#, with: #""email":{"resend_interval":3600}"#)
        try #require(config != Self.config)
        let f = try Fixture(config: config)
        let client = f.client()
        await #expect(throws: AuthClientError.invalidEmail) { try await client.sendEmailCode("not-an-email") }
        let mails = f.mailCount()
        try await client.sendEmailCode("b@example.com")
        let sendAgain: [@Sendable () async throws -> Void] = [
            { try await client.sendEmailCode("b@example.com") }, { _ = try await client.resendEmailCode("b@example.com") },
        ]
        for again in sendAgain {
            do {
                try await again()
                Issue.record("no rate limit")
            } catch let error as AuthClientError {
                guard case .rateLimited(let seconds) = error else { Issue.record("got \(error)"); continue }
                #expect(seconds > 3000)
                #expect(error.localizedDescription.hasPrefix("Too many attempts. Please try again in"))
            }
        }
        await #expect(throws: AuthClientError.invalidCode(attemptsRemaining: 4)) { try await client.verifyEmailCode(email: "b@example.com", code: "000000x") }
        #expect(AuthClientError.invalidCode(attemptsRemaining: 4).localizedDescription == "That code is wrong. 4 tries left.")
        #expect(try await client.verifyEmailCode(email: "b@example.com", code: try await f.code(after: mails)).user.email == "b@example.com")
        await #expect(throws: AuthClientError.invalidAppleToken) { try await client.signInWithApple(identityToken: "garbage") }
        await #expect(throws: AuthClientError.weakPassword(reason: "too_common")) { try await client.register(email: "c@example.com", password: "password1") }
        #expect(AuthClientError.invalidCredentials.localizedDescription == "Those sign-in details are not correct.")
        let unreachable = AuthClient(baseURL: URL(string: "http://127.0.0.1:1")!)
        do {
            try await unreachable.sendEmailCode("a@b.co")
            Issue.record("reached a server that is not there")
        } catch let error as AuthClientError {
            guard case .network = error else { Issue.record("got \(error)"); return }
        }
    }

    @Test func aCodeResentOnceTheIntervalHasPassedSignsIn() async throws {
        let f = try Fixture()
        let client = f.client()
        try await client.sendEmailCode("r@example.com")
        try await Task.sleep(for: .seconds(1))  // the suite's resend_interval; more passing changes nothing
        let mails = f.mailCount()
        #expect(try await client.resendEmailCode("r@example.com").expiresIn == 300)
        #expect(try await client.verifyEmailCode(email: "r@example.com", code: try await f.code(after: mails)).user.email == "r@example.com")
    }

    @Test func aDisabledAccountIsReportedAsSuch() async throws {
        let f = try Fixture()
        let client = f.client()
        _ = try await f.signInByEmail(client, "off@example.com")
        let admin = Process()
        admin.executableURL = URL(fileURLWithPath: ServerProcess.binary)
        admin.arguments = ["users", "disable", "off@example.com", "--data", f.server.folder]
        admin.standardOutput = FileHandle.nullDevice
        try admin.run()
        admin.waitUntilExit()
        #expect(admin.terminationStatus == 0)
        let again = f.client()
        let before = f.mailCount()
        try await Task.sleep(for: .seconds(1))  // the address's resend interval, which outlives the first sign-in
        try await again.sendEmailCode("off@example.com")
        let code = try await f.code(after: before)
        await #expect(throws: AuthClientError.accountDisabled) { try await again.verifyEmailCode(email: "off@example.com", code: code) }
        #expect(AuthClientError.accountDisabled.localizedDescription.contains("disabled"))
    }

    @Test func aClosedSignUpIsReportedAsSuch() async throws {
        let f = try Fixture(config: #"{"mail":{"transport":"outbox"},"signup":{"mode":"invite"}}"#)
        let client = f.client()
        await #expect(throws: AuthClientError.signupClosed) { _ = try await client.signInAnonymously() }
        #expect(AuthClientError.signupClosed.localizedDescription.contains("invitation"))
        // The mailed answer is no code: the person reads that there is no account.
        let before = f.mailCount()
        try await client.sendEmailCode("new@example.com")
        for _ in 0..<6000 where f.mailCount() == before { try await Task.sleep(for: .milliseconds(10)) }
        let line = try #require(String(contentsOfFile: f.server.folder + "/outbox.jsonl", encoding: .utf8).split(separator: "\n").last)
        let mail = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let text = (mail["subject"] as? String ?? "") + "\n" + (mail["text"] as? String ?? "")
        #expect(text.contains("no account") && text.firstMatch(of: /[0-9]{6}/) == nil, "read as a person reads it: no code in it")
    }

    @Test func fiftyParallelRequestsWithAnExpiredTokenShareOneRefresh() async throws {
        let f = try Fixture()
        let client = f.client()
        let session = try await f.signInByEmail(client, "many@example.com")
        var expired = session.tokens
        expired.expiresAt = Date(timeIntervalSinceNow: -10)
        try await client.tokenStore.save(expired)
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await client.me().id } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ids.count == 50 && Set(ids) == [session.user.id])
        #expect(await client.refreshRequestsSent == 1)
        #expect(try await client.tokenStore.load()?.refreshToken != session.tokens.refreshToken)
    }

    @Test func a401RefreshesAndRetriesOnce() async throws {
        let f = try Fixture()
        let client = f.client()
        let session = try await f.signInByEmail(client, "retry@example.com")
        var broken = session.tokens
        broken.accessToken = "not-a-token"
        try await client.tokenStore.save(broken)
        #expect(try await client.me().id == session.user.id)
        #expect(await client.refreshRequestsSent == 1)
    }

    @Test func aFailedRefreshSignsOut() async throws {
        let f = try Fixture()
        let phone = f.client(), laptop = f.client()
        _ = try await f.signInByEmail(phone, "two@example.com", device: "phone")
        try await Task.sleep(for: .seconds(1))
        _ = try await f.signInByEmail(laptop, "two@example.com", device: "laptop")
        let other = try #require(try await phone.sessions().first { !$0.current })
        try await phone.revokeSession(other.id)
        await #expect(throws: AuthClientError.sessionExpired) { try await laptop.me() }
        #expect(await !laptop.isSignedIn)
        #expect(try await phone.me().email == "two@example.com")
    }

    @Test func anonymousPINUsernameAndASecondDevice() async throws {
        let f = try Fixture()
        let first = f.client(), second = f.client()
        let anonymous = try await first.signInAnonymously(deviceName: "kiosk")
        #expect(anonymous.user.isAnonymous)
        await #expect(throws: AuthClientError.invalidPIN) { try await first.setPIN("12") }
        try await first.setPIN("4711")
        #expect(try await first.setUsername("otto").username == "otto")
        await #expect(throws: AuthClientError.usernameTaken) {
            _ = try await second.signInAnonymously()
            try await second.setUsername("OTTO")
        }
        let back = try await second.signIn(username: "otto", pin: "4711", deviceName: "tablet")
        #expect(back.user.id == anonymous.user.id)
        #expect(try await second.signIn(userID: anonymous.user.id, pin: "4711").user.id == anonymous.user.id)
        await #expect(throws: AuthClientError.invalidCredentials) { try await second.signIn(username: "otto", pin: "0000") }
        try await first.setPIN("0815", currentPIN: "4711")
        #expect(try await first.sessions().count == 1)  // changing the PIN ended the others

        // Upgrade by linking an email: same user, no longer anonymous.
        let before = f.mailCount()
        try await first.sendEmailCode("otto@example.com")
        let linked = try await first.verifyEmailCode(email: "otto@example.com", code: try await f.code(after: before), link: true)
        #expect(linked.user.id == anonymous.user.id && !linked.user.isAnonymous && linked.user.authProviders == ["pin", "email"])
    }

    @Test func passwordRegistrationChangeAndBothResets() async throws {
        let f = try Fixture()
        let phone = f.client(), laptop = f.client()
        let email = "pw@example.com"
        var mails = f.mailCount()
        try await phone.register(email: email, password: "first good secret", displayName: "Pat")
        await #expect(throws: AuthClientError.emailNotVerified) { try await laptop.signIn(email: email, password: "first good secret") }
        try await Task.sleep(for: .seconds(1))
        mails = f.mailCount()
        try await phone.resendVerification(email: email)
        let registered = try await phone.verifyRegistration(email: email, code: try await f.code(after: mails), password: "first good secret")
        #expect(registered.user.displayName == "Pat" && registered.user.authProviders == ["password"])
        await #expect(throws: AuthClientError.accountExists) { try await laptop.register(email: email, password: "another good one") }
        try await laptop.signIn(email: email, password: "first good secret")
        // A 401 about the request (a wrong current password) is not one about the token: no refresh, no sign-out.
        await #expect(throws: AuthClientError.invalidCredentials) { try await phone.changePassword(current: "not the password", new: "second good secret") }
        #expect(await phone.isSignedIn)
        #expect(await phone.refreshRequestsSent == 0)
        try await phone.changePassword(current: "first good secret", new: "second good secret")
        await #expect(throws: AuthClientError.sessionExpired) { try await laptop.me() }

        mails = f.mailCount()
        try await laptop.startEmailReset(email: email)
        let resetCode = try await f.code(after: mails)
        try await laptop.completeEmailReset(email: email, code: resetCode, newPassword: "third good secret")
        await #expect(throws: AuthClientError.sessionExpired) { try await phone.me() }
        try await phone.signIn(email: email, password: "third good secret", deviceName: "phone")

        let request = try await laptop.startDeviceReset(email: email, newPassword: "fourth good secret", deviceName: "laptop")
        #expect(request.matchCode.count == 3)
        let waiting = try await phone.approvals()
        #expect(waiting.map(\.id) == [request.requestID] && waiting[0].deviceName == "laptop")
        async let status = laptop.waitForDeviceResetApproval(request.requestID, pollInterval: .milliseconds(50), timeout: .seconds(120))
        try await Task.sleep(for: .milliseconds(100))
        try await phone.approve(request.requestID, matchCode: request.matchCode)
        #expect(try await status == .approved)
        try await laptop.completeDeviceReset(request.requestID)
        #expect(try await laptop.deviceResetStatus(request.requestID) == .completed)
        await #expect(throws: AuthClientError.sessionExpired) { try await phone.me() }
        try await laptop.signIn(email: email, password: "fourth good secret")

        let denied = try await phone.startDeviceReset(email: email, newPassword: "fifth good secret")
        try await laptop.deny(denied.requestID)
        #expect(try await phone.deviceResetStatus(denied.requestID) == .denied)
        await #expect(throws: AuthClientError.self) { try await phone.completeDeviceReset(denied.requestID) }
    }

    @Test func twoStepResetMetadataAndLogoutByRefreshToken() async throws {
        let f = try Fixture()
        let app = f.client(), other = f.client()
        let email = "two@example.com"
        var mails = f.mailCount()
        try await app.register(email: email, password: "first good secret")
        _ = try await app.verifyRegistration(email: email, code: try await f.code(after: mails), password: "first good secret")
        let user = try await app.updateUserMetadata(["theme": .string("dark"), "tags": .array([.number(1), .bool(true)])])
        #expect(user.userMetadata["theme"] == .string("dark") && user.appMetadata.isEmpty)
        #expect(try await app.me().userMetadata["tags"] == .array([.number(1), .bool(true)]))

        mails = f.mailCount()
        try await other.startEmailReset(email: email)
        let code = try await f.code(after: mails)
        let wrong = code == "000000" ? "111111" : "000000"
        await #expect(throws: AuthClientError.invalidCode(attemptsRemaining: 4)) { _ = try await other.verifyEmailResetCode(email: email, code: wrong) }
        let token = try await other.verifyEmailResetCode(email: email, code: code)
        let session = try await other.completeReset(resetToken: token, newPassword: "second good secret", signIn: true, deviceName: "tablet")
        let signedIn = await other.isSignedIn
        #expect(session?.user.email == email && signedIn)
        await #expect(throws: AuthClientError.sessionExpired) { try await app.me() }

        // Logout sends the refresh token, not the access token: it works after the access token expired.
        var tokens = try #require(try await other.tokenStore.load())
        tokens.accessToken = "expired.or.forged"
        try await other.tokenStore.save(tokens)
        try await other.logout()
        #expect(await !other.isSignedIn)
        let again = f.client()
        try await again.tokenStore.save(tokens)
        await #expect(throws: AuthClientError.sessionExpired) { try await again.refresh() }
    }

    @Test func pushTokenRegistrationAndTheApprovalRequestsStream() async throws {
        let f = try Fixture()
        let phone = f.client(), laptop = f.client()
        let email = "stream@example.com"
        let mails = f.mailCount()
        try await phone.register(email: email, password: "first good secret")
        _ = try await phone.verifyRegistration(email: email, code: try await f.code(after: mails), password: "first good secret")
        try await phone.registerPushToken(Data(repeating: 0xAB, count: 32), environment: "sandbox")
        await #expect(throws: AuthClientError.invalidRequest("The field `environment` must be \"production\" or \"sandbox\".")) {
            try await phone.registerPushToken(Data(repeating: 0xAB, count: 32), environment: "staging")
        }
        try await phone.unregisterPushToken()

        let stream = phone.approvalRequests(pollInterval: .milliseconds(100))
        let first = Task { () -> Approval? in
            for try await approval in stream { return approval }
            return nil
        }
        try await Task.sleep(for: .milliseconds(200))
        let request = try await laptop.startDeviceReset(email: email, newPassword: "second good secret", deviceName: "laptop")
        let seen = try await first.value
        #expect(seen?.id == request.requestID && seen?.deviceName == "laptop")
    }

    @Test func deletingTheAccountForgetsTheTokens() async throws {
        let f = try Fixture()
        let client = f.client()
        let first = try await f.signInByEmail(client, "gone@example.com")
        try await client.deleteAccount()
        #expect(await !client.isSignedIn)
        try await Task.sleep(for: .seconds(1))
        let again = try await f.signInByEmail(client, "gone@example.com")
        #expect(again.user.id != first.user.id)
    }

    @Test func fileTokenStoreIsPrivate() async throws {
        let path = NSTemporaryDirectory() + "tokens-\(UUID().uuidString).json"
        let store = FileTokenStore(path: path)
        #expect(try await store.load() == nil)
        let tokens = AuthTokens(accessToken: "a", refreshToken: "r", expiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        try await store.save(tokens)
        try await store.save(tokens)
        #expect(try await store.load() == tokens)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try await store.clear()
        #expect(try await store.load() == nil)
    }

    @Test func anAPIKeyIsCreatedListedExchangedByItsProviderAndRevoked() async throws {
        let f = try Fixture()
        let phone = f.client()
        _ = try await f.signInByEmail(phone, "keys@example.com", device: "phone")
        let created = try await phone.createAPIKey(name: "NAS")
        #expect(created.secret.hasPrefix("authd_ak_") && created.name == "NAS" && created.expiresAt == nil)
        #expect(try await phone.apiKeys().map(\.id) == [created.id])
        #expect(try await phone.sessions().contains { $0.kind == "api_key" && $0.id == created.id })

        let tokens = APIKeyTokenProvider(baseURL: URL(string: f.server.baseURL)!, apiKey: created.secret, margin: 299.5)
        async let a = tokens.accessToken()
        async let b = tokens.accessToken()
        let (first, second) = try await (a, b)
        let exchanges = await tokens.exchanges
        #expect(first == second && exchanges == 1, "concurrent callers share one exchange")
        var me = URLRequest(url: URL(string: f.server.baseURL + "/api/v1/auth/me")!)
        me.setValue("Bearer \(first)", forHTTPHeaderField: "Authorization")
        #expect((try await URLSession.shared.data(for: me).1 as? HTTPURLResponse)?.statusCode == 200)
        try await Task.sleep(for: .seconds(1))
        #expect(try await tokens.accessToken() != first, "exchanged again once within the margin of expiry")
        let after = await tokens.exchanges
        #expect(after == 2)

        try await phone.revokeAPIKey(created.id)
        await tokens.invalidate()
        await #expect(throws: AuthClientError.invalidAPIKey(reason: "revoked")) { _ = try await tokens.accessToken() }
        #expect(try await phone.apiKeys().isEmpty)
    }

    /// A session that is no longer fresh approves only with its refresh token as proof (contract
    /// §12): AuthClient sends it itself, while the access token alone is refused.
    @Test func anApprovalFromAStaleSessionCarriesItsRefreshTokenAsProof() async throws {
        let f = try Fixture(config: Self.config.replacingOccurrences(of: #""device":{"interval":1}"#, with: #""device":{"interval":1},"auth":{"fresh_auth":1}"#))
        let phone = f.client()
        let signedIn = try await f.signInByEmail(phone, "stale@example.com", device: "phone")
        try await Task.sleep(for: .seconds(2))  // past auth.fresh_auth: the session is no longer fresh
        let tv = f.client()
        let bare = try await tv.startDeviceSignIn(deviceName: "TV")
        let (status, body) = try await f.server.request("POST", "/api/v1/auth/device/\(bare.userCode)/approve", bearer: signedIn.tokens.accessToken)
        #expect(status == 403 && (body["error"] as? [String: Any])?["code"] as? String == "REAUTH_REQUIRED")
        async let waiting = tv.waitForDeviceSignIn(bare)
        try await phone.approveDeviceSignIn(userCode: bare.userCode)
        #expect(try await waiting.user.email == "stale@example.com")
    }

    @Test func aDeviceSignsInWhenAPersonApprovesAndIsToldWhenDenied() async throws {
        let f = try Fixture()
        let phone = f.client()
        _ = try await f.signInByEmail(phone, "tv@example.com", device: "phone")
        let tv = f.client()
        let started = try await tv.startDeviceSignIn(clientID: "tv-app", deviceName: "Living-room TV", platform: "tvos")
        #expect(started.userCode.count == 9 && started.interval == 1 && started.verificationURI.hasSuffix("/device"))
        async let waiting = tv.waitForDeviceSignIn(started, clientID: "tv-app")
        let pending = try await phone.deviceSignInRequest(userCode: started.userCode.lowercased())
        #expect(pending.deviceName == "Living-room TV" && pending.platform == "tvos" && pending.clientID == "tv-app")
        try await phone.approveDeviceSignIn(userCode: started.userCode)
        let session = try await waiting
        #expect(session.user.email == "tv@example.com")
        #expect(try await tv.me().email == "tv@example.com")
        await #expect(throws: AuthClientError.forbidden) { _ = try await tv.createAPIKey(name: "nope") }
        #expect(try await tv.refresh().accessToken != session.tokens.accessToken, "a device session refreshes like any other")

        let other = f.client()
        let denied = try await other.startDeviceSignIn()
        let refused = Task { try await other.waitForDeviceSignIn(denied) }
        try await phone.denyDeviceSignIn(userCode: denied.userCode)
        await #expect(throws: AuthClientError.deviceSignInDenied) { _ = try await refused.value }
    }
}
