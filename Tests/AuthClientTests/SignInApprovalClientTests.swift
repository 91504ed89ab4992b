import AuthClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerProcessSupport
import Testing

/// Signing in by approval from another device (contract §15) through the client, against a real
/// `authd serve`: the new device asks and shows two digits, the signed-in one lists the request and
/// types them (or refuses), and the new device's wait ends in a session or the refusal. Also the
/// approval as a second factor.
@Suite(.serialized)
struct SignInApprovalClientTests {
    static let config = #"""
        {"mail":{"transport":"outbox"},"providers":["email","approval"],"email":{"resend_interval":1},"approval":{"interval":1}}
        """#

    /// The `amr` claim of an access token, read from its payload.
    static func amr(_ accessToken: String) throws -> [String] {
        let parts = accessToken.split(separator: ".")
        guard parts.count == 3 else { throw E2EError("not a JWT: \(accessToken)") }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let claims = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw E2EError("unreadable JWT payload")
        }
        return claims["amr"] as? [String] ?? []
    }

    /// What `body` threw, if anything.
    static func thrown(_ body: () async throws -> Void) async -> (any Error)? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    /// The first mail after the first `count` (up to a minute: mail is sent after the answer), as a person reads it.
    static func mail(_ f: AuthClientTests.Fixture, after count: Int) async throws -> (to: String, subject: String, text: String) {
        for _ in 0..<6000 {
            if f.mailCount() > count {
                let lines = try String(contentsOfFile: f.server.folder + "/outbox.jsonl", encoding: .utf8).split(separator: "\n")
                let mail = try JSONSerialization.jsonObject(with: Data(lines[count].utf8)) as? [String: Any] ?? [:]
                return (mail["to"] as? String ?? "", mail["subject"] as? String ?? "", mail["text"] as? String ?? "")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw E2EError("no mail arrived")
    }

    @Test func aNewDeviceSignsInWhenTheSignedInOneTypesItsNumber() async throws {
        let f = try AuthClientTests.Fixture(config: Self.config)
        let phone = f.client(), laptop = f.client()
        #expect(try await phone.providers() == ["email", "approval"])
        let signedIn = try await f.signInByEmail(phone, "anna@example.com", device: "Anna's phone")

        let request = try await laptop.requestSignInApproval(email: "Anna@Example.com", deviceName: "Anna's laptop", platform: "linux")
        #expect(request.matchCode.count == 2 && request.matchCode.allSatisfy { $0.isASCII && $0.isNumber })
        #expect(request.expiresIn == 120 && request.interval == 1 && !request.requestID.isEmpty)
        // An app may keep the request across a relaunch: the copy waits as well as the original.
        let kept = try JSONDecoder().decode(SignInApprovalRequest.self, from: JSONEncoder().encode(request))
        #expect(kept == request)
        let waiting = Task { try await laptop.waitForSignInApproval(kept) }

        let listed = try await phone.approvals()
        let item = try #require(listed.first)
        #expect(listed.count == 1 && item.id == request.requestID && item.kind == "sign_in")
        #expect(item.deviceName == "Anna's laptop" && item.platform == "linux" && item.network == "127.0.0.0/24")
        // The list never carries the number: the person reads it off the new device.
        let (status, raw) = try await f.server.request("GET", "/api/v1/auth/approvals", bearer: signedIn.tokens.accessToken)
        let rawItem = try #require((raw["approvals"] as? [[String: Any]])?.first)
        #expect(status == 200 && rawItem["match_code"] == nil)
        #expect(Set(rawItem.keys).isSubset(of: ["id", "kind", "created_at", "expires_at", "device_name", "platform", "network"]))

        try await phone.approve(request.requestID, matchCode: request.matchCode)
        let session = try await waiting.value
        #expect(session.user.id == signedIn.user.id && session.user.email == "anna@example.com")
        #expect(try Self.amr(session.tokens.accessToken) == ["approval"])
        #expect(try await laptop.tokenStore.load() == session.tokens)
        #expect(try await laptop.me().id == signedIn.user.id)
        #expect(try await phone.approvals().isEmpty)
        #expect(try await laptop.sessions().contains { $0.current && $0.deviceName == "Anna's laptop" && $0.platform == "linux" })

        // A request signs one device in, once.
        let again = await Self.thrown { try await f.client().waitForSignInApproval(request) }
        guard case .invalidState? = again as? AuthClientError else {
            Issue.record("a second completion gave \(String(describing: again))")
            return
        }
    }

    @Test func aWrongNumberDeniesTheSignInAndSoDoesNo() async throws {
        let f = try AuthClientTests.Fixture(config: Self.config)
        let phone = f.client(), laptop = f.client()
        _ = try await f.signInByEmail(phone, "ben@example.com", device: "phone")

        let request = try await laptop.requestSignInApproval(email: "ben@example.com", deviceName: "laptop")
        let waiting = Task { try await laptop.waitForSignInApproval(request) }
        let wrong = request.matchCode == "42" ? "24" : "42"
        // One wrong number ends the request: the phone is told so (and stays signed in).
        await #expect(throws: AuthClientError.invalidCode(attemptsRemaining: 0)) { try await phone.approve(request.requestID, matchCode: wrong) }
        await #expect(throws: AuthClientError.approvalDenied) { try await waiting.value }
        #expect(await !laptop.isSignedIn)
        #expect(try await phone.approvals().isEmpty)
        let late = await Self.thrown { try await phone.approve(request.requestID, matchCode: request.matchCode) }
        guard case .invalidState? = late as? AuthClientError else {
            Issue.record("the right number after a wrong one gave \(String(describing: late))")
            return
        }
        #expect(try await phone.me().email == "ben@example.com")
        #expect(await phone.refreshRequestsSent == 0, "a wrong number is not taken for a dead token")

        let second = try await laptop.requestSignInApproval(email: "ben@example.com", deviceName: "laptop")
        let refused = Task { try await laptop.waitForSignInApproval(second) }
        try await phone.deny(second.requestID)
        await #expect(throws: AuthClientError.approvalDenied) { try await refused.value }
        #expect(await !laptop.isSignedIn)
        #expect(AuthClientError.approvalDenied.localizedDescription == "The sign-in was not approved on your other device.")
    }

    @Test func notMeRefusesMailsTheOwnerAndTurnsTheNextRequestsIntoDecoys() async throws {
        let f = try AuthClientTests.Fixture(config: Self.config)
        let phone = f.client(), stranger = f.client()
        _ = try await f.signInByEmail(phone, "cy@example.com", device: "phone")
        let mails = f.mailCount()

        let request = try await stranger.requestSignInApproval(email: "cy@example.com", deviceName: "Unknown PC", platform: "windows")
        let waiting = Task { try await stranger.waitForSignInApproval(request) }
        let item = try #require(try await phone.approvals().first)
        #expect(item.id == request.requestID && item.deviceName == "Unknown PC" && item.platform == "windows")
        try await phone.deny(request.requestID, notMe: true)
        await #expect(throws: AuthClientError.approvalDenied) { try await waiting.value }
        #expect(await !stranger.isSignedIn)

        let mail = try await Self.mail(f, after: mails)
        #expect(mail.to == "cy@example.com" && mail.subject.lowercased().contains("sign-in"), "\(mail)")

        // From that network the account now answers decoys: the same shape, never listed, never approvable.
        let decoy = try await stranger.requestSignInApproval(email: "cy@example.com", deviceName: "Unknown PC")
        #expect(decoy.matchCode.count == 2 && decoy.expiresIn == 120 && decoy.requestID != request.requestID)
        #expect(try await phone.approvals().isEmpty)
        let approved = await Self.thrown { try await phone.approve(decoy.requestID, matchCode: decoy.matchCode) }
        #expect(approved as? AuthClientError == .notFound, "approving a decoy gave \(String(describing: approved))")
    }

    /// A request no one can approve (the server expires it after `approval.ttl`, at least 30 s: too
    /// long to wait for here) stays pending, and the wait ends when its task is cancelled.
    @Test func anUnknownAccountGetsARequestLikeAnyOtherThatNeverEnds() async throws {
        let f = try AuthClientTests.Fixture(config: Self.config)
        let laptop = f.client()
        await #expect(throws: AuthClientError.invalidEmail) { try await laptop.requestSignInApproval(email: "not-an-email") }
        // No such account, by email or user name: the answer looks like any other.
        for request in [
            try await laptop.requestSignInApproval(email: "nobody@example.com", deviceName: "laptop"),
            try await laptop.requestSignInApproval(username: "nobody", deviceName: "laptop"),
        ] {
            #expect(request.matchCode.count == 2 && request.expiresIn == 120 && request.interval == 1)
            let waiting = Task { try await laptop.waitForSignInApproval(request) }
            try await Task.sleep(for: .milliseconds(2500))  // two polls answered PENDING
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
        }
        #expect(await !laptop.isSignedIn)
        #expect(AuthClientError.approvalExpired.localizedDescription == "The sign-in was not approved in time. Please start again.")
    }

    @Test func theApprovalCanBeTheSecondFactor() async throws {
        let config = Self.config.replacingOccurrences(of: #""providers":["email","approval"]"#, with: #""providers":["email","approval","totp"]"#)
        try #require(config != Self.config)
        let f = try AuthClientTests.Fixture(config: config)
        let phone = f.client(), laptop = f.client(), tablet = f.client(), tv = f.client()
        let signedIn = try await f.signInByEmail(phone, "dee@example.com", device: "phone")
        let enrolment = try await phone.enrollTOTP()
        _ = try await phone.confirmTOTP(code: SecondFactorClientTests.totp(enrolment.secret))

        // The phone signed in with the email code alone: its approval is one factor, so the laptop
        // is asked for a second one (not another approval).
        let request = try await laptop.requestSignInApproval(email: "dee@example.com", deviceName: "laptop")
        let waiting = Task { try await laptop.waitForSignInApproval(request) }
        try await phone.approve(request.requestID, matchCode: request.matchCode)
        var challenge: SecondFactorChallenge?
        do {
            _ = try await waiting.value
            Issue.record("signed in without the second factor")
        } catch AuthClientError.secondFactorRequired(let c) {
            challenge = c
        }
        let c = try #require(challenge)
        #expect(c.factors.contains("totp") && !c.factors.contains("approval"), "\(c.factors)")
        #expect(await !laptop.isSignedIn)
        let laptopSession = try await laptop.completeSignIn(c, with: .totp(SecondFactorClientTests.totp(enrolment.secret, at: Date().addingTimeInterval(30))))
        let laptopAMR = try Self.amr(laptopSession.tokens.accessToken)
        #expect(laptopAMR.contains("approval") && laptopAMR.contains("mfa"), "\(laptopAMR)")

        // The second factor by approval: the same number to type, the same wait.
        var offered: SecondFactorChallenge?
        do {
            _ = try await f.signInByEmail(tablet, "dee@example.com", device: "tablet")
            Issue.record("signed in without the second factor")
        } catch AuthClientError.secondFactorRequired(let c) {
            offered = c
        }
        let emailed = try #require(offered)
        #expect(emailed.factors.contains("approval") && emailed.factors.contains("totp"), "\(emailed.factors)")
        let second = try await tablet.requestSecondFactorApproval(emailed)
        #expect(second.matchCode.count == 2 && second.interval == 1 && second.expiresIn == 120)
        let confirming = Task { try await tablet.waitForSignInApproval(second) }
        let item = try #require(try await phone.approvals().first { $0.id == second.requestID })
        #expect(item.kind == "sign_in" && item.deviceName == "tablet")
        try await phone.approve(second.requestID, matchCode: second.matchCode)
        let session = try await confirming.value
        let amr = try Self.amr(session.tokens.accessToken)
        #expect(session.user.id == signedIn.user.id && amr.contains("approval") && amr.contains("mfa"), "\(amr)")
        #expect(try await tablet.me().id == signedIn.user.id)
        await #expect(throws: AuthClientError.invalidChallenge) { try await tablet.completeSignIn(emailed, with: .recoveryCode("whatever")) }

        // A session with both factors vouches for both: the next device signs in at once.
        let third = try await tv.requestSignInApproval(email: "dee@example.com", deviceName: "tv")
        let direct = Task { try await tv.waitForSignInApproval(third) }
        try await laptop.approve(third.requestID, matchCode: third.matchCode)
        let tvSession = try await direct.value
        #expect(Set(try Self.amr(tvSession.tokens.accessToken)) == ["approval", "mfa"])
    }

    @Test func anApprovalDecodesWhatTheServerSaysOfTheDevice() throws {
        let now = #"{"id":"a1","kind":"sign_in","created_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-01T00:02:00Z","device_name":"Mac","platform":"macos","network":"2001:db8:1::/48"}"#
        let approval = try JSONDecoder().decode(Approval.self, from: Data(now.utf8))
        #expect(approval.kind == "sign_in" && approval.deviceName == "Mac" && approval.platform == "macos" && approval.network == "2001:db8:1::/48")
        // What servers before sign-in approval send (and `null`s) still decode.
        let before = #"{"id":"r1","kind":"password_reset","created_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-01T00:10:00Z","device_name":null}"#
        let old = try JSONDecoder().decode(Approval.self, from: Data(before.utf8))
        #expect(old.kind == "password_reset" && old.deviceName == nil && old.platform == nil && old.network == nil)
        let nulls = #"{"id":"a2","kind":"sign_in","created_at":"x","expires_at":"y","device_name":null,"platform":null,"network":null}"#
        #expect(try JSONDecoder().decode(Approval.self, from: Data(nulls.utf8)).network == nil)
        // The request an app keeps holds what it polls with; the public fields are what it shows.
        let started = #"{"request_id":"q1","request_token":"secret","match_code":"07","expires_in":120,"interval":2}"#
        let request = try JSONDecoder().decode(SignInApprovalRequest.self, from: Data(started.utf8))
        #expect(request.requestID == "q1" && request.matchCode == "07" && request.expiresIn == 120 && request.interval == 2)
        let kept = try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? [String: Any]
        #expect(kept?["request_token"] as? String == "secret")
    }
}
