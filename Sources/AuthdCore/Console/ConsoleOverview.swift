import AuthKernel
import AuthStorage
import Foundation

/// The console's overview (contract §14): users and sessions, sign-ins and failures of the last 24
/// hours by provider (from this instance's audit log), and the mail and webhook backlog.
struct ConsoleOverview: Sendable {
    let kernel: Kernel
    let store: any AuthStore
    /// `DATA/audit.jsonl`, when the server keeps one.
    let auditPath: String?

    /// The most of the audit log read for the 24 hours: its current file is rotated at
    /// `audit.max_bytes` (16 MiB by default), and one rotated file may hold the rest of the day.
    static let maxAuditBytes = 64 << 20

    struct Facts {
        var values: [String: Any]
    }

    /// Sign-ins and failures by provider since `since`.
    struct Tally: Equatable {
        var succeeded = 0
        var failed = 0
    }

    func facts() async throws -> Facts {
        let counts = try await store.counts()
        let since = kernel.clock.now().addingTimeInterval(-86_400)
        let tallies = auditPath.map { Self.signIns(in: [$0, $0.replacingOccurrences(of: "audit.jsonl", with: "audit-1.jsonl")], since: since) } ?? [:]
        let providers = tallies.sorted { ($0.value.succeeded + $0.value.failed, $1.key) > ($1.value.succeeded + $1.value.failed, $0.key) }
        let jobs = try await kernel.jobs.pending()
        var backlog: [String: (waiting: Int, failing: Int)] = [:]
        for job in jobs { backlog[job.kind, default: (0, 0)].waiting += 1; if job.attempts > 0 { backlog[job.kind, default: (0, 0)].failing += 1 } }
        let kinds = Set(backlog.keys).union(["mail", "webhook"]).sorted()
        return Facts(values: [
            "users": counts.users, "sessions": counts.sessions,
            "signins": providers.reduce(0) { $0 + $1.value.succeeded }, "failures": providers.reduce(0) { $0 + $1.value.failed },
            "chart": SignInChart.svg(providers.map { ($0.key, $0.value.succeeded, $0.value.failed) }),
            "providers": providers.map { ["name": $0.key, "ok": $0.value.succeeded, "failed": $0.value.failed] }, "has_providers": !providers.isEmpty,
            "jobs": kinds.map { ["kind": $0, "waiting": backlog[$0]?.waiting ?? 0, "failing": backlog[$0]?.failing ?? 0] },
            "audited": auditPath != nil,
        ])
    }

    /// Counts `sign_in` and `sign_in_failed` events at or after `since` in the audit files, newest
    /// file first; lines that are not events are skipped.
    static func signIns(in paths: [String], since: Date) -> [String: Tally] {
        var tallies: [String: Tally] = [:]
        let cutoff = Timestamp.string(since)
        let marker = Array(#""event":"sign_in"#.utf8)
        var budget = maxAuditBytes
        for path in paths {
            guard budget > 0, let handle = FileHandle(forReadingAtPath: path) else { continue }
            defer { try? handle.close() }
            let size = (try? handle.seekToEnd()) ?? 0
            let start = size > UInt64(budget) ? size - UInt64(budget) : 0
            try? handle.seek(toOffset: start)
            guard let data = try? handle.readToEnd() else { continue }
            budget -= data.count
            var older = false
            for line in data.split(separator: 0x0A) where line.count < 8192 {
                // Most lines are other events: a byte search before any JSON.
                guard line.firstRange(of: marker) != nil,
                    let entry = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let time = entry["time"] as? String,
                    let event = entry["event"] as? String
                else { continue }
                // Timestamps are ISO 8601 in UTC: they sort as strings.
                guard time >= cutoff else { older = true; continue }
                let provider = (entry["provider"] as? String) ?? "-"
                if event == "sign_in" { tallies[provider, default: Tally()].succeeded += 1 } else if event == "sign_in_failed" { tallies[provider, default: Tally()].failed += 1 }
            }
            // The rotated file is older still: needed only while this one reaches back less than a day.
            if older { break }
        }
        return tallies
    }
}
