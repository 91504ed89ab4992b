@testable import AuthdCore
@testable import AuthdServer
@testable import AuthKernel
import FileStore
import AuthKernelTesting
import Foundation
import Synchronization
import Testing

/// The long admin commands report how far they have come, and the CLI draws it on a terminal.
struct AdminProgressTests {
    /// Collects what a command reports.
    final class Reports: Sendable {
        let all = Mutex<[AdminProgress]>([])
        var sink: AdminProgressSink { { report in self.all.withLock { $0.append(report) } } }
        func of(_ phase: String) -> [AdminProgress] { all.withLock { $0.filter { $0.phase == phase } } }
    }

    /// Counts and shares never go back, and the last report of a phase says all of it is done.
    static func expectComplete(_ reports: [AdminProgress], done: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reports.count >= 2, "\(reports)", sourceLocation: sourceLocation)
        for (a, b) in zip(reports, reports.dropFirst()) {
            #expect(a.done <= b.done && (a.fraction ?? 0) <= (b.fraction ?? 0), "\(a) then \(b)", sourceLocation: sourceLocation)
        }
        #expect(reports.first?.done == 0, sourceLocation: sourceLocation)
        #expect(reports.last?.done == done && reports.last?.fraction == 1, "\(String(describing: reports.last))", sourceLocation: sourceLocation)
    }

    @Test func importUsersReportsLinesAndThePartOfTheFileRead() async throws {
        let h = try await TestHarness.make(configure: { $0.addFullServerParts() })
        let file = h.folder + "/users.jsonl"
        let lines = (0..<1_234).map { #"{"email":"user\#($0)@example.com"}"# }
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let operations = try AdminOperations(server: h.server, dataFolder: h.folder)

        let dry = Reports()
        #expect(await operations.run(.importUsers(from: file, dryRun: true), progress: dry.sink).exitCode == 0)
        Self.expectComplete(dry.of("checking users"), done: 1_234)

        let real = Reports()
        #expect(await operations.run(.importUsers(from: file, dryRun: false), progress: real.sink).exitCode == 0)
        let reports = real.of("importing users")
        Self.expectComplete(reports, done: 1_234)
        // One report per batch written, each a share of the bytes read so far.
        #expect(reports.contains { $0.done == UserImport.batch && ($0.fraction ?? 0) > 0.35 && ($0.fraction ?? 1) < 0.45 })
        await h.server.close()
    }

    @Test func backupExportAndImportReportRecordsWrittenAndStored() async throws {
        let h = try await TestHarness.make(configure: { $0.addFullServerParts() })
        for i in 0..<300 { _ = try await h.signIn("p\(i)", email: "p\(i)@example.com") }
        let records = try await h.server.store.read([.allUsers, .allSessions, .allCodes, .allApprovals, .allJobs]) { state -> Int in
            SnapshotFile.recordCount(state)
        }
        #expect(records >= 600)
        let operations = try AdminOperations(server: h.server, dataFolder: h.folder)

        let backup = Reports()
        #expect(await operations.run(.backup(to: h.folder + "/backup.json"), progress: backup.sink).exitCode == 0)
        Self.expectComplete(backup.of("writing the backup"), done: records)
        #expect(backup.of("writing the backup").allSatisfy { $0.total == records && $0.unit == "records" })

        let export = Reports()
        #expect(await operations.run(.export(to: h.folder + "/export.json"), progress: export.sink).exitCode == 0)
        Self.expectComplete(export.of("exporting"), done: records)
        await h.server.close()

        let fresh = try await TestHarness.make()
        let load = Reports()
        let output = await (try AdminOperations(server: fresh.server, dataFolder: fresh.folder)).run(.importBundle(from: h.folder + "/export.json"), progress: load.sink)
        #expect(output.exitCode == 0, "\(output.text)")
        #expect(load.of("checking export.json").first?.done == 0 && load.of("checking export.json").last?.done == records)
        Self.expectComplete(load.of("storing"), done: records)
        await fresh.server.close()
    }

    @Test func theLineShowsCountShareRateAndTimeLeft() {
        let p = AdminProgress(phase: "importing users", done: 412_000, unit: "lines", fraction: 0.4)
        #expect(ProgressLine.text(p, elapsed: 10) == "importing users: 412,000 lines (40%), 41,200/s, 0:15 left")
        // Too early for a rate; a finished phase shows how long it took.
        #expect(ProgressLine.text(p, elapsed: 0.2) == "importing users: 412,000 lines (40%)")
        let done = AdminProgress(phase: "exporting", done: 1_000_000, unit: "records", total: 1_000_000)
        #expect(done.fraction == 1)
        #expect(ProgressLine.text(done, elapsed: 3_723.2) == "exporting: 1,000,000 of 1,000,000 records (100%), 269/s, 1:02:04")
        // A phase that cannot count says it is alive.
        #expect(ProgressLine.text(AdminProgress(phase: "reading move.json", done: 0, unit: "records"), elapsed: 4) == "reading move.json… 0:04")
        #expect(ProgressLine.grouped(0) == "0" && ProgressLine.grouped(999) == "999" && ProgressLine.grouped(1_000) == "1,000" && ProgressLine.grouped(-12_345) == "-12,345")
        #expect(ProgressLine.duration(59.2) == "1:00" && ProgressLine.duration(600) == "10:00")
    }

    @Test func theLineIsRedrawnAtMostTenTimesASecondAndErasedAtTheEnd() {
        let now = Mutex(0.0)
        let written = Mutex<[String]>([])
        let line = ProgressLine(clock: { now.withLock { $0 } }, output: { text in written.withLock { $0.append(text) } })
        line.finish()
        #expect(written.withLock { $0 }.isEmpty)  // nothing drawn, nothing to erase

        for i in 0..<50 {  // every 10 ms for half a second
            now.withLock { $0 = Double(i) / 100 }
            line.report(AdminProgress(phase: "storing", done: i, unit: "records", total: 100))
        }
        #expect((5...6).contains(written.withLock { $0.count }))
        now.withLock { $0 += 0.01 }
        line.report(AdminProgress(phase: "storing", done: 100, unit: "records", total: 100))  // the end is always drawn
        line.report(AdminProgress(phase: "next", done: 0, unit: "records", total: 1))  // and so is a new phase
        let drawn = written.withLock { $0 }
        #expect(drawn.suffix(2).map { $0.hasPrefix("\r\u{1B}[K") } == [true, true])
        #expect(drawn.suffix(2).first?.contains("100 of 100 records (100%)") == true)
        #expect(drawn.last?.hasPrefix("\r\u{1B}[Knext:") == true)
        line.finish()
        #expect(written.withLock { $0.last } == "\r\u{1B}[K")
    }
}
