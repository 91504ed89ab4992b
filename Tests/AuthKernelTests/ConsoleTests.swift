@testable import AuthdCore
import AuthKernel
import AuthKernelTesting
import AuthStorage
import Foundation
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
        #expect(svg.contains("width=\"\(SignInChart.width - SignInChart.labelWidth - 60)\""))
        #expect(SignInChart.svg([]) == "")
    }
}
