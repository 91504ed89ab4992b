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
        let messages = kernel.messages
        func number(_ n: Int) -> String { messages.number(n) }
        return Facts(values: [
            "users": number(counts.users), "sessions": number(counts.sessions),
            "signins": number(providers.reduce(0) { $0 + $1.value.succeeded }), "failures": number(providers.reduce(0) { $0 + $1.value.failed }),
            "chart": SignInChart.svg(providers.map { ($0.key, $0.value.succeeded, $0.value.failed) }, messages: messages),
            "providers": providers.map { ["name": $0.key, "ok": number($0.value.succeeded), "failed": number($0.value.failed)] }, "has_providers": !providers.isEmpty,
            "jobs": kinds.map { kind in
                ["kind": ["mail": "console.overview.job.mail", "webhook": "console.overview.job.webhook"][kind].map { messages.text($0) } ?? kind,
                 "waiting": number(backlog[kind]?.waiting ?? 0), "failing": number(backlog[kind]?.failing ?? 0)]
            },
            "audited": auditPath != nil, "signup": Self.signupLine(kernel.config.signup, messages: messages),
        ])
    }

    /// `signup.mode` in words, in the task's language (as `check` says it in English).
    static func signupLine(_ signup: AuthConfig.SignupSettings, messages: Messages) -> String {
        let mode = switch signup.mode {
        case .open: messages.text("console.overview.signup.open")
        case .invite: messages.text("console.overview.signup.invite")
        case .domains: messages.text("console.overview.signup.domains", ["domains": signup.domains.joined(separator: ", ")])
        }
        return signup.anonymous ? messages.text("console.overview.signup.anonymous", ["mode": mode]) : mode
    }

    /// Counts `sign_in` and `sign_in_failed` events at or after `since` in the audit files.
    static func signIns(in paths: [String], since: Date) -> [String: Tally] {
        var tallies: [String: Tally] = [:]
        // Timestamps are ISO 8601 in UTC: they sort as strings.
        let cutoff = Timestamp.string(since)
        for entry in AuditReader.entries(in: paths) where entry.time >= cutoff {
            switch entry.event {
            case "sign_in": tallies[entry.provider ?? "-", default: Tally()].succeeded += 1
            case "sign_in_failed": tallies[entry.provider ?? "-", default: Tally()].failed += 1
            default: continue
            }
        }
        return tallies
    }
}
