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
        return console(kernel.messages.text("console.webhooks.title"), "admin-webhooks", [
            "endpoints": webhookSettings.endpoints.map { ["url": ConfigSecrets.redactedURL($0.url), "events": $0.events.sorted().joined(separator: ", ")] },
            "has_endpoints": !webhookSettings.endpoints.isEmpty,
            "pending": pending.map { ["job": $0.id.lowercased, "message": text($0, "id"), "url": ConfigSecrets.redactedURL(text($0, "url")), "attempts": kernel.messages.number($0.attempts),
                                      "next": when($0.runAfter)] },
            "has_pending": !pending.isEmpty,
            "recent": (recentDeliveries?.list ?? []).map { ["message": $0.messageID, "url": ConfigSecrets.redactedURL($0.url), "attempt": kernel.messages.number($0.attempt),
                                                             "outcome": $0.outcome == "delivered" ? kernel.messages.text("console.webhooks.delivered") : $0.outcome,
                                                             "at": when($0.at), "ok": $0.outcome == "delivered"] },
            "has_recent": !(recentDeliveries?.list.isEmpty ?? true),
        ], op, error: error, status: status)
    }

    /// Runs a waiting delivery now (on any instance's store: its next try is brought forward first).
    func retry(_ op: Operator, job id: String) async throws -> Response {
        guard let uuid = UUID(uuidString: id), let job = try await kernel.jobs.pending().first(where: { $0.id == uuid && $0.kind == WebhookDispatcher.jobKind })
        else { return try await showWebhooks(op, error: kernel.messages.text("console.webhooks.gone"), status: .notFound) }
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
        let since = Self.auditDate(q.get("since")), until = Self.auditDate(q.get("until"))
        // A picked day runs to its end: every time that day sorts below "DAYU" ("T" < "U").
        let untilBound = until.count == 10 ? until + "U" : until
        let page = max(0, min(10_000, Int(q.get("page") ?? "0") ?? 0))
        let entries = auditPath.map { AuditReader.entries(in: [$0, $0.replacingOccurrences(of: "audit.jsonl", with: "audit-1.jsonl")]) } ?? []
        let matching = entries.filter { e in
            (event.isEmpty || e.event == event) && (user.isEmpty || e.userID == user || e.account?.lowercased() == user)
                && (since.isEmpty || e.time >= since) && (until.isEmpty || e.time <= untilBound)
        }
        let shown = matching.dropFirst(page * Self.auditPageSize).prefix(Self.auditPageSize)
        func link(_ page: Int) -> String {
            let query = [("user", user), ("event", event), ("since", since), ("until", until)].filter { !$0.1.isEmpty }
                .map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" } + ["page=\(page)"]
            return "/admin/audit?" + query.joined(separator: "&")
        }
        let events = (kernel.audit.declaredEvents.map(\.name)).sorted()
        // The people the rows name, looked up once each: their email, linked to their page.
        var people: [String: UserRecord?] = [:]
        for id in Set(shown.compactMap(\.userID)) {
            guard let uuid = UUID(uuidString: id) else { continue }
            people[id] = try await kernel.users.user(id: uuid)
        }
        var values: [String: Any] = [
            "user": user, "since_day": String(since.prefix(10)), "until_day": String(until.prefix(10)),
            "events": events.map { ["name": $0, "selected": $0 == event] }, "any_event": event.isEmpty,
            "entries": shown.map { Self.auditRow($0, person: $0.userID.flatMap { people[$0] ?? nil }, messages: kernel.messages) },
            "has_entries": !shown.isEmpty, "count": kernel.messages.number(matching.count), "page": kernel.messages.number(page + 1),
        ]
        if page > 0 { values["newer"] = link(page - 1) }
        if matching.count > (page + 1) * Self.auditPageSize { values["older"] = link(page + 1) }
        return console(kernel.messages.text("console.audit.title"), "admin-audit", values, op)
    }

    /// A date the audit filter takes: `YYYY-MM-DD` (a date picker's) or `YYYY-MM-DDTHH:MM[:SS]`;
    /// anything else is no filter.
    static func auditDate(_ raw: String?) -> String {
        guard let raw, (10...19).contains(raw.count), raw.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-" || $0 == ":" || $0 == "T") }) else { return "" }
        return raw
    }

    /// One audit row: the person it is about by email, linked to their page; their id (and that the
    /// account is gone) only when there is no such account any more; who did it when someone else did.
    static func auditRow(_ e: AuditReader.Entry, person: UserRecord?, messages: Messages = shippedMessages) -> [String: Any] {
        var row: [String: Any] = ["time": e.time, "event": e.event, "provider": e.provider ?? "", "ip": e.ip ?? "", "reason": e.reason ?? ""]
        if let person {
            row["person_link"] = "/admin/users/" + person.id.lowercased
            row["person"] = person.email ?? person.username ?? person.id.lowercased
        } else if let id = e.userID {
            row["person"] = messages.text("console.audit.deleted", ["id": id])
        } else {
            row["person"] = e.account ?? ""
        }
        // An operator's or a service key's change: who made it.
        if let account = e.account, person != nil || e.userID != nil, account.lowercased() != person?.email?.lowercased() {
            row["by"] = account
        }
        return row
    }

    func showConfig(_ op: Operator) async throws -> Response {
        let config = kernel.config
        return console(kernel.messages.text("console.config.title"), "admin-config", [
            // Without `check`'s English heading line: the page's own sentence says what the lines are.
            "warnings": AdminOperations.configurationWarnings(config),
            "text": AdminOperations.effectiveConfiguration(config).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().joined(),
        ], op)
    }
}
