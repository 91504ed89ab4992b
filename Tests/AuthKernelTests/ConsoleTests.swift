@testable import AuthdCore
import AuthKernel
import AuthKernelTesting
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird
import Testing

/// The console's parts that a browser test cannot pin down: the role's records, the overview's
/// count of the audit log against the injected clock, the chart's escaping.
struct ConsoleTests {
    @Test func theRoleIsGrantedOnceToAVerifiedEmailAndGoesWithTheAccount() async throws {
        let h = try await TestHarness.make()
        let operators = Operators(store: h.server.store, clock: h.kernel.clock)
        let verified = try await h.kernel.users.signIn(
            .init(identity: Identity(provider: "email", subject: "op@example.com"), email: "op@example.com", emailVerified: true), linkingToUser: nil)
        let anonymous = try await h.kernel.users.createAnonymous()
        await #expect(throws: AuthError.self) { try await operators.grant(anonymous, by: "test") }
        try await operators.grant(verified, by: "test")
        try await operators.grant(verified, by: "again")
        let listed = try await operators.list()
        #expect(listed.count == 1 && listed[0].email == "op@example.com" && listed[0].grantedBy == "test")
        #expect(try await operators.isOperator(verified.id))
        #expect(try await operators.isOperator(anonymous.id) == false)
        let first = try await operators.revoke(verified.id), second = try await operators.revoke(verified.id)
        #expect(first && !second)
        #expect(try await operators.isOperator(verified.id) == false)
        await h.server.close()
    }

    @Test func theOverviewCountsTheLastDaysSignInsByProviderFromBothAuditFiles() throws {
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func line(_ event: String, _ provider: String, hoursAgo: Double) -> String {
            #"{"time":"\#(Timestamp.string(now.addingTimeInterval(-hoursAgo * 3600)))","event":"\#(event)","provider":"\#(provider)"}"#
        }
        // The rotated file is older; the day began in it.
        try [line("sign_in", "email", hoursAgo: 30), line("sign_in", "email", hoursAgo: 23), line("sign_in_failed", "password", hoursAgo: 22)]
            .joined(separator: "\n").write(toFile: folder + "/audit-1.jsonl", atomically: true, encoding: .utf8)
        try [line("sign_in", "passkey", hoursAgo: 2), line("logout", "email", hoursAgo: 1), "not json \"event\":\"sign_in\"", line("sign_in_failed", "password", hoursAgo: 0.5),
             line("sign_in", "email", hoursAgo: 0)]
            .joined(separator: "\n").write(toFile: folder + "/audit.jsonl", atomically: true, encoding: .utf8)
        let tallies = ConsoleOverview.signIns(in: [folder + "/audit.jsonl", folder + "/audit-1.jsonl"], since: now.addingTimeInterval(-86_400))
        #expect(tallies == ["email": .init(succeeded: 2, failed: 0), "passkey": .init(succeeded: 1, failed: 0), "password": .init(succeeded: 0, failed: 2)])
    }

    @Test func theChartEscapesWhatItDrawsAndScalesToTheLargestCount() {
        let svg = SignInChart.svg([("a<script>&\"'", 10, 5), ("email", 0, 0)])
        #expect(!svg.contains("<script>") && svg.contains("a&lt;script&gt;&amp;&quot;&#39;"))
        #expect(svg.contains("width=\"\(SignInChart.plot)\""))
        #expect(SignInChart.svg([]) == "")
    }

    @Test func theChartHasALegendAndSaysEachCountInWordsNotByColourAlone() {
        let svg = SignInChart.svg([("email", 12, 3)])
        #expect(svg.contains("class=\"chart-legend\"") && svg.contains(">Sign-ins</text>") && svg.contains(">Failed sign-ins</text>"))
        #expect(svg.contains(">12 signed in</text>") && svg.contains(">3 failed</text>"))
        // Failures are hatched as well as coloured.
        #expect(svg.contains("fill=\"url(#chart-hatch)\""))
    }

    @Test func theNavigationMarksThePageShownAndTheSectionOfARecordsPage() {
        func marks(_ template: String) -> [String: String] {
            Dictionary(uniqueKeysWithValues: ConsoleRoutes.navigation(current: template).compactMap { item in
                (item["current"] as? String).map { (item["href"] as! String, $0) }
            })
        }
        #expect(marks("admin-overview") == ["/admin": "page"])
        #expect(marks("admin-users") == ["/admin/users": "page"])
        #expect(marks("admin-user") == ["/admin/users": "true"])
        #expect(marks("admin-client") == ["/admin/clients": "true"])
        #expect(marks("admin-audit") == ["/admin/audit": "page"])
        #expect(marks("message") == [:])
    }

    @Test func aStaleSignInsDraftKeepsTheFormsFieldsButNoSecretsForItsOperatorAndPageOnly() throws {
        let box = try SecretBox(key: Array(repeating: 7, count: 32))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let me = UUID(), someoneElse = UUID()
        #expect(ConsoleDraft.page(of: "/admin/clients/abc/edit") == "/admin/clients/abc")
        #expect(ConsoleDraft.page(of: "/admin/users/new") == "/admin/users")
        #expect(ConsoleDraft.page(of: "/admin/invitations") == "/admin/users")
        #expect(ConsoleDraft.page(of: "/admin/clients") == "/admin/clients")
        #expect(ConsoleDraft.page(of: "/admin/keys/photos/revoke") == "/admin/keys")
        #expect(ConsoleDraft.page(of: "/admin/webhooks/123/retry") == "/admin/webhooks")
        let form = PageForm(["csrf": "token", "claims": "plan", "allowed_groups": "family", "first_party": "on", "password": "hunter2", "confirm": "x@example.com"])
        let draft = ConsoleDraft.of(form, action: "/admin/clients/abc/edit", user: me, now: now)
        #expect(draft.fields == ["claims": "plan", "allowed_groups": "family", "first_party": "on"])
        let cookie = try #require(draft.cookie(box: box))
        #expect(!cookie.value.contains("plan"), "sealed")
        func request(_ value: String) -> Request {
            Request(head: .init(method: .get, scheme: "https", authority: "localhost", path: "/admin/clients/abc", headerFields: [.cookie: "\(ConsoleDraft.cookieName)=\(value)"]), body: .init(buffer: .init()))
        }
        #expect(ConsoleDraft.unsealed(request(cookie.value), box: box, user: me, page: "/admin/clients/abc", now: now) == draft)
        #expect(ConsoleDraft.unsealed(request(cookie.value), box: box, user: someoneElse, page: "/admin/clients/abc", now: now) == nil)
        #expect(ConsoleDraft.unsealed(request(cookie.value), box: box, user: me, page: "/admin/clients/xyz", now: now) == nil)
        #expect(ConsoleDraft.unsealed(request(cookie.value), box: box, user: me, page: "/admin/clients/abc", now: now.addingTimeInterval(901)) == nil)
        // Refilled into the page's own keys; an unticked box is one absent from the post.
        var values: [String: Any] = ["claims": "", "pkce_optional": true]
        draft.apply(to: &values)
        #expect(values["claims"] as? String == "plan" && values["first_party"] as? Bool == true && values["pkce_optional"] as? Bool == false)
        // A new thing's form fills its own prefixed keys.
        var users: [String: Any] = [:]
        ConsoleDraft.of(PageForm(["email": "new@example.com", "email_verified": "on"]), action: "/admin/users/new", user: me, now: now).apply(to: &users)
        #expect(users["new_email"] as? String == "new@example.com" && users["new_email_verified"] as? Bool == true && users["email"] == nil)
        // Too long to keep: no cookie at all.
        let long = ConsoleDraft.of(PageForm(["app_metadata": String(repeating: "x", count: 4000)]), action: "/admin/users/\(me)/profile", user: me, now: now)
        #expect(long.cookie(box: box) == nil)
    }

    @Test func anOperatorCreatesAUserOnceAuditedAndAnExistingEmailIsRefused() async throws {
        let h = try await TestHarness.make()
        let administration = UserAdministration(kernel: h.kernel)
        let actor = UserAdministration.Actor(event: "admin_console", account: "root@example.com")
        let made = try await administration.create(
            email: "New@Example.com", displayName: "Nia", groups: ["family"], emailVerified: true, in: h.server.store, by: actor)
        #expect(made.email == "new@example.com" && made.emailVerified && made.displayName == "Nia" && made.groups == ["family"])
        #expect(made.identities == [Identity(provider: "email", subject: "new@example.com")])
        #expect(try await h.kernel.users.user(email: "new@example.com")?.id == made.id)
        do {
            _ = try await administration.create(email: "new@example.com", displayName: nil, groups: [], emailVerified: false, in: h.server.store, by: actor)
            Issue.record("an existing email must be refused")
        } catch let error as AuthError {
            #expect(error.status == .conflict && error.code == "EMAIL_IN_USE" && error.message.contains("new@example.com"))
        }
        await #expect(throws: AuthError.self) {
            try await administration.create(email: "not an address", displayName: nil, groups: [], emailVerified: false, in: h.server.store, by: actor)
        }
        // A mailed code to the address signs in to the account made.
        let signedIn = try await h.kernel.users.signIn(
            .init(identity: Identity(provider: "email", subject: "new@example.com"), email: "new@example.com", emailVerified: true), linkingToUser: nil)
        #expect(signedIn.id == made.id)
        await h.server.close()
    }

    @Test func auditRowsNameThePersonByEmailLinkedAndTheirIdOnlyOnceTheAccountIsGone() {
        let user = UserRecord(email: "ana@example.com", createdAt: Date())
        let entry = AuditReader.Entry(time: "2026-01-01T00:00:00Z", event: "admin_console", userID: user.id.lowercased, account: "root@example.com", reason: "update user")
        let row = ConsoleRoutes.auditRow(entry, person: user)
        #expect(row["person"] as? String == "ana@example.com" && row["person_link"] as? String == "/admin/users/" + user.id.lowercased)
        #expect(row["by"] as? String == "root@example.com")
        let own = ConsoleRoutes.auditRow(AuditReader.Entry(time: "t", event: "sign_in", userID: user.id.lowercased, account: "ana@example.com"), person: user)
        #expect(own["by"] == nil)
        let gone = ConsoleRoutes.auditRow(entry, person: nil)
        #expect(gone["person"] as? String == user.id.lowercased + " (account deleted)" && gone["person_link"] == nil)
        #expect(ConsoleRoutes.auditDate("2026-01-31") == "2026-01-31" && ConsoleRoutes.auditDate("2026-01-31T08:00") == "2026-01-31T08:00")
        #expect(ConsoleRoutes.auditDate("2026<script>") == "" && ConsoleRoutes.auditDate(nil) == "")
    }
}
