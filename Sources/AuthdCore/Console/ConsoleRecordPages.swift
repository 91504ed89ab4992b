import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird

/// The console's webhooks (endpoints, deliveries waiting or failing with a retry, this instance's
/// latest attempts), the audit log (filtered by user, event and time, in pages) and the effective
/// configuration with its secrets redacted (contract §14, §17: ``ConfigSecrets``; a URL's password too).
extension ConsoleRoutes {
    static let auditPageSize = 50

    func addRecordPages(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get("admin/webhooks") { request, context in try await routes.page(request, context) { try await routes.showWebhooks($0) } }
        router.post("admin/webhooks/:job/retry") { request, context in
            try await routes.change(request, context) { op, _ in try await routes.retry(op, job: context.parameters.get("job") ?? "") }
        }
        router.get("admin/audit") { request, context in try await routes.page(request, context) { try await routes.showAudit($0, request) } }
        router.get("admin/config") { request, context in try await routes.page(request, context) { try await routes.showConfig($0) } }
    }

    func showWebhooks(_ op: Operator, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let pending = try await kernel.jobs.pending().filter { $0.kind == WebhookDispatcher.jobKind }
        func text(_ job: JobRecord, _ key: String) -> String { if case .string(let s)? = job.payload[key] { s } else { "" } }
        return console("Webhooks", "admin-webhooks", [
            "endpoints": webhookSettings.endpoints.map { ["url": ConfigSecrets.redactedURL($0.url), "events": $0.events.sorted().joined(separator: ", ")] },
            "has_endpoints": !webhookSettings.endpoints.isEmpty,
            "pending": pending.map { ["job": $0.id.lowercased, "message": text($0, "id"), "url": ConfigSecrets.redactedURL(text($0, "url")), "attempts": $0.attempts,
                                      "next": Timestamp.string($0.runAfter)] },
            "has_pending": !pending.isEmpty,
            "recent": (recentDeliveries?.list ?? []).map { ["message": $0.messageID, "url": ConfigSecrets.redactedURL($0.url), "attempt": $0.attempt, "outcome": $0.outcome,
                                                             "at": Timestamp.string($0.at), "ok": $0.outcome == "delivered"] },
            "has_recent": !(recentDeliveries?.list.isEmpty ?? true),
        ], op, error: error, status: status)
    }

    /// Runs a waiting delivery now (on any instance's store: its next try is brought forward first).
    func retry(_ op: Operator, job id: String) async throws -> Response {
        guard let uuid = UUID(uuidString: id), let job = try await kernel.jobs.pending().first(where: { $0.id == uuid && $0.kind == WebhookDispatcher.jobKind })
        else { return try await showWebhooks(op, error: "That delivery is not waiting any more (delivered, or given up).", status: .notFound) }
        let now = kernel.clock.now()
        try await store.write([.job(uuid)]) { state in
            guard var current = state.jobs[uuid] else { return }
            current.runAfter = now
            state.put(current)
        }
        let delivered = await kernel.jobs.run(job)
        await kernel.audit.record("admin_console", account: op.email, reason: "retry webhook delivery \(id): \(delivered ? "delivered" : "failed again")")
        return PageGate.redirect(to: "/admin/webhooks")
    }

    func showAudit(_ op: Operator, _ request: Request) async throws -> Response {
        let q = request.uri.queryParameters
        let user = String((q.get("user") ?? "").prefix(254)).lowercased(), event = String((q.get("event") ?? "").prefix(64))
        let since = String((q.get("since") ?? "").prefix(32)), until = String((q.get("until") ?? "").prefix(32))
        let page = max(0, min(10_000, Int(q.get("page") ?? "0") ?? 0))
        let entries = auditPath.map { AuditReader.entries(in: [$0, $0.replacingOccurrences(of: "audit.jsonl", with: "audit-1.jsonl")]) } ?? []
        let matching = entries.filter { e in
            (event.isEmpty || e.event == event) && (user.isEmpty || e.userID == user || e.account?.lowercased() == user)
                && (since.isEmpty || e.time >= since) && (until.isEmpty || e.time <= until)
        }
        let shown = matching.dropFirst(page * Self.auditPageSize).prefix(Self.auditPageSize)
        func link(_ page: Int) -> String {
            let query = [("user", user), ("event", event), ("since", since), ("until", until)].filter { !$0.1.isEmpty }
                .map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" } + ["page=\(page)"]
            return "/admin/audit?" + query.joined(separator: "&")
        }
        let events = (kernel.audit.declaredEvents.map(\.name)).sorted()
        var values: [String: Any] = [
            "user": user, "since": since, "until": until,
            "events": events.map { ["name": $0, "selected": $0 == event] }, "any_event": event.isEmpty,
            "entries": shown.map { ["time": $0.time, "event": $0.event, "provider": $0.provider ?? "", "who": $0.account ?? $0.userID ?? "",
                                    "ip": $0.ip ?? "", "reason": $0.reason ?? ""] },
            "has_entries": !shown.isEmpty, "count": matching.count, "page": page + 1,
        ]
        if page > 0 { values["newer"] = link(page - 1) }
        if matching.count > (page + 1) * Self.auditPageSize { values["older"] = link(page + 1) }
        return console("Audit log", "admin-audit", values, op)
    }

    func showConfig(_ op: Operator) async throws -> Response {
        let config = kernel.config
        return console("Configuration", "admin-config", [
            "warnings": AdminOperations.configurationWarnings(config), "text": AdminOperations.effectiveConfiguration(config),
        ], op)
    }
}
