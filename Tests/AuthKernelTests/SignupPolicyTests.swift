@testable import AuthKernel
import AuthKernelTesting
import AuthStorage
import EmailProvider
import FileStore
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Testing

/// Contract §17's sign-up policy where the kernel holds it: every account made through
/// `users.signIn` (what every provider, a third party's too, calls), on the injected clock; the
/// closed send-code doing the same work as an open one (writes and mails counted, not timed).
struct SignupPolicyTests {
    static func harness(_ signup: String, store: (any AuthStore)? = nil, folder: String? = nil) async throws -> TestHarness {
        try await TestHarness.make(
            providers: [EmailProvider.self], config: #"{"mail":{"transport":"outbox"},"email":{"resend_interval":0},"signup":\#(signup)}"#,
            folder: folder, store: store)
    }

    static func claim(_ email: String, verified: Bool = true, provider: String = "magic") -> UserService.Claim {
        .init(identity: Identity(provider: provider, subject: email), email: email, emailVerified: verified)
    }

    @Test func inviteModeRefusesEveryNewAccountButNeverAnExistingOne() async throws {
        let h = try await Self.harness(#"{"mode":"invite"}"#)
        // A third-party provider's sign-in through the SDK.
        await #expect(throws: AuthError.signupClosed) { _ = try await h.kernel.users.signIn(Self.claim("new@example.com"), linkingTo: nil) }
        await #expect(throws: AuthError.signupClosed) { _ = try await h.kernel.users.createAnonymous() }
        #expect(try await h.kernel.users.user(email: "new@example.com") == nil, "nothing was written")
        // An invitation lets the verified address in, with its groups and name, once.
        _ = try await h.kernel.invitations.invite(email: "new@example.com", groups: ["family"], displayName: "New", by: "test", vouched: false)
        #expect(try await h.kernel.signup.allowsNewAccount(email: "new@example.com", emailVerified: true))
        #expect(try await !h.kernel.signup.allowsNewAccount(email: "new@example.com", emailVerified: false), "an unverified claim proves no mailbox")
        await #expect(throws: AuthError.signupClosed) { _ = try await h.kernel.users.signIn(Self.claim("new@example.com", verified: false), linkingTo: nil) }
        let made = try await h.kernel.users.signIn(Self.claim("new@example.com"), linkingTo: nil)
        #expect(made.groups == ["family"] && made.displayName == "New" && made.emailVerified)
        #expect(try await h.kernel.invitations.list().isEmpty, "used up in the write that made the account")
        // Signing in again, or by another provider's verified claim to the same address (a join), is never refused.
        #expect(try await h.kernel.users.signIn(Self.claim("new@example.com"), linkingTo: nil).id == made.id)
        #expect(try await h.kernel.users.signIn(Self.claim("new@example.com", provider: "other"), linkingTo: nil).id == made.id)
    }

    @Test func anInvitationExpiresOnTheClock() async throws {
        let h = try await Self.harness(#"{"mode":"invite"}"#)
        _ = try await h.kernel.invitations.invite(email: "late@example.com", groups: [], displayName: nil, by: "test", vouched: false)
        h.clock.advance(by: Double(Invitations.lifetime) - 1)
        #expect(try await h.kernel.signup.allowsNewAccount(email: "late@example.com", emailVerified: true))
        h.clock.advance(by: 1)
        #expect(try await !h.kernel.signup.allowsNewAccount(email: "late@example.com", emailVerified: true))
        await #expect(throws: AuthError.signupClosed) { _ = try await h.kernel.users.signIn(Self.claim("late@example.com"), linkingTo: nil) }
    }

    @Test func domainsModeLetsInVerifiedAddressesOfTheListedDomainsOnly() async throws {
        let h = try await Self.harness(#"{"mode":"domains","domains":["Example.com","lab.example.org"]}"#)
        #expect(try await h.kernel.users.signIn(Self.claim("ann@EXAMPLE.COM".lowercased()), linkingTo: nil).email == "ann@example.com")
        #expect(try await h.kernel.users.signIn(Self.claim("bo@lab.example.org"), linkingTo: nil).email == "bo@lab.example.org")
        for (email, verified) in [("cy@sub.example.com", true), ("di@example.org", true), ("ed@example.com", false), ("fi@notexample.com", true)] {
            await #expect(throws: AuthError.signupClosed, "\(email)") { _ = try await h.kernel.users.signIn(Self.claim(email, verified: verified), linkingTo: nil) }
        }
        // An identity without an email (an upstream that gives none) cannot make an account.
        await #expect(throws: AuthError.signupClosed) {
            _ = try await h.kernel.users.signIn(.init(identity: Identity(provider: "magic", subject: "no-mail"), email: nil, emailVerified: false), linkingTo: nil)
        }
        #expect(!h.kernel.signup.allowsAnonymous)
    }

    @Test func anAnonymousAccountsFirstIdentityIsASignUp() async throws {
        let h = try await Self.harness(#"{"mode":"invite","anonymous":true}"#)
        let anonymous = try await h.kernel.users.createAnonymous()
        await #expect(throws: AuthError.signupClosed) {
            _ = try await h.kernel.users.signIn(Self.claim("anon@example.com"), linkingToUser: anonymous.id)
        }
        #expect(try await h.kernel.users.user(id: anonymous.id)?.isAnonymous == true, "unchanged")
        // A PIN (an identity of the account's own) first changes nothing: still a sign-up.
        _ = try await h.kernel.users.update(anonymous.id) { $0.identities.append(Identity(provider: "pin", subject: anonymous.id.lowercased)) }
        await #expect(throws: AuthError.signupClosed) {
            _ = try await h.kernel.users.signIn(Self.claim("anon@example.com"), linkingToUser: anonymous.id)
        }
        _ = try await h.kernel.invitations.invite(email: "anon@example.com", groups: ["kids"], displayName: nil, by: "test", vouched: false)
        let linked = try await h.kernel.users.signIn(Self.claim("anon@example.com"), linkingToUser: anonymous.id)
        #expect(linked.id == anonymous.id && !linked.isAnonymous && linked.groups == ["kids"])
    }

    @Test func configurationIsCheckedAtStart() async throws {
        for bad in [#"{"mode":"closed"}"#, #"{"mode":"domains"}"#, #"{"mode":"domains","domains":["@example.com"]}"#, #"{"surprise":1}"#] {
            await #expect(throws: (any Error).self, "\(bad)") { _ = try await Self.harness(bad) }
        }
        let open = try await Self.harness("{}")
        #expect(open.kernel.signup.mode == .open && open.kernel.signup.allowsAnonymous)
        #expect(try await open.kernel.users.signIn(Self.claim("anyone@example.com"), linkingTo: nil).email == "anyone@example.com")
    }

    /// Closed, an unknown address's send-code does what a known one's does: one code write, one mail
    /// queued, the same answer; only the mail's words differ (no code).
    @Test func aClosedSendCodeDoesTheSameWorkForUnknownAndKnownAddresses() async throws {
        let folder = temporaryFolder()
        let store = CountingStore(try await JournalStore.open(folder: folder, logger: Logger(label: "test")))
        let h = try await Self.harness(#"{"mode":"invite"}"#, store: store, folder: folder)
        _ = try await h.kernel.invitations.invite(email: "known@example.com", groups: [], displayName: nil, by: "test", vouched: false)
        _ = try await h.kernel.users.signIn(Self.claim("known@example.com", provider: "email"), linkingTo: nil)
        try await h.test { client async throws in
            // The least of three tries each: the server's background work (purges) may write meanwhile.
            var work: [String: (writes: Int, mails: Int, body: String)] = [:]
            for email in ["known@example.com", "unknown@example.com"] {
                for _ in 0..<3 {
                    let writes = store.writeCount, mails = try h.mail(to: email).count
                    let answer = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": email])
                    #expect(answer.status == .ok)
                    // The mail goes out after the answer: counted once it is delivered and its job gone.
                    for _ in 0..<3000 {
                        let delivered = try h.mail(to: email).count > mails, idle = try await h.kernel.jobs.pending().isEmpty
                        if delivered && idle { break }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    let tried = (store.writeCount - writes, try h.mail(to: email).count - mails, String(buffer: answer.body))
                    if let best = work[email], best.writes <= tried.0 { continue }
                    work[email] = tried
                }
            }
            let known = try #require(work["known@example.com"]), unknown = try #require(work["unknown@example.com"])
            // The same answer (as JSON: the encoder's key order is its own).
            func parsed(_ body: String) -> NSDictionary? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? NSDictionary }
            #expect(known.writes == unknown.writes && known.mails == 1 && unknown.mails == 1, "\(known) \(unknown)")
            #expect(parsed(known.body) != nil && parsed(known.body) == parsed(unknown.body))
            #expect(try h.mail(to: "known@example.com").last?.code != nil)
            let refusal = try #require(try h.mail(to: "unknown@example.com").last)
            #expect(refusal.code == nil && refusal.template == "kernel.no_account" && refusal.text.contains("invitation"))
        }
    }
}
