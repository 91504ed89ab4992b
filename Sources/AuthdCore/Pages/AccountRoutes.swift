import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird

/// `GET /account` (contract §13): a signed-in person sees where they are signed in and ends
/// sessions, sees and removes the apps they allowed, and manages what providers offer there
/// (passkeys).
struct AccountRoutes: Sendable {
    let kernel: Kernel
    let gate: PageGate
    let renderer: PageRenderer
    let login: LoginRoutes
    /// The apps the user allowed, and ending one's access.
    let openID: OpenIDRoutes

    func add(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get("account") { request, context in try await routes.login.guarded(request, context) { try await routes.show(request) } }
        // Where a `return_to` that would leave the issuer lands (contract §13): the account page.
        router.get("/") { request, context in try await routes.login.guarded(request, context) { PageGate.redirect(to: "/account", status: .found) } }
        router.post("account/sessions/:id/end") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.end(form, request, context) }
        }
        router.post("account/grants/:client/end") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.endGrant(form, request, context) }
        }
        router.post("account/profile") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.profile(form, request) }
        }
        router.post("account/language") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.language(form, request) }
        }
        router.post("account/delete") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.delete(form, request) }
        }
        router.post("account/approvals/:id/:answer") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.answer(form, request, context) }
        }
        router.post("account/:provider/:action") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.providerPost(form, request, context) }
        }
    }

    /// A provider's account form (adding a passkey): its next step, or back to `/account`.
    func providerPost(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        let id = context.parameters.get("provider") ?? ""
        guard let provider = login.providers.first(where: { type(of: $0).id == id }) else {
            return try await show(request, error: kernel.messages.text("account.error.no_such_setting"), status: .notFound)
        }
        do {
            guard let step = try await provider.accountPost(action: context.parameters.get("action") ?? "", form: form, principal: principal, context: context)
            else { return PageGate.redirect(to: "/account") }
            if step.returnsToAccount { return done(step.notice, principal) }
            return renderer.page(
                title: kernel.messages.text("account.title"), content: renderer.render(step, csrf: csrf, action: "/account/\(id)/"), error: step.error, status: step.status,
                signedIn: true, csrf: csrf)
        } catch let error as AuthError where error.code == "REAUTH_REQUIRED" {
            return try await show(request, error: kernel.messages.text("account.error.too_old"), status: .forbidden)
        } catch let error as AuthError {
            return try await show(request, error: kernel.messages.sentence(error), status: error.status)
        }
    }

    /// Back to `/account`, which shows `notice` once.
    func done(_ notice: String?, _ principal: Principal) -> Response {
        var response = PageGate.redirect(to: "/account")
        if let notice { response.setCookie(NoticeCookie.cookie(notice, box: login.box, session: principal.session.id)) }
        return response
    }

    func show(_ request: Request, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount", status: .found) }
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        let now = kernel.clock.now()
        let sessions = try await kernel.sessions.sessions(of: principal.user.id).sorted { $0.lastUsedAt > $1.lastUsedAt }
        var appNames: [String: String] = [:]
        for id in Set(sessions.compactMap(\.clientID)) { appNames[id] = try await openID.clients.find(id)?.name }
        let rows: [[String: Any]] = sessions.map { session in
            let (name, detail) = Self.named(session, app: session.clientID.flatMap { appNames[$0] }, messages: kernel.messages)
            var row: [String: Any] = [
                "id": session.id.lowercased, "name": name,
                "kind": kernel.messages.text(session.isAPIKey ? "account.kind.api_key" : session.isBrowser ? "account.kind.browser" : "account.kind.app"), "network": kernel.sessions.network(of: session) ?? "",
                "created": PageValue.time(session.createdAt, now: now, messages: kernel.messages).mustache, "used": PageValue.time(session.lastUsedAt, now: now, messages: kernel.messages).mustache,
                "current": session.id == principal.session.id, "csrf": csrf,
            ]
            // Only when there is one: Mustache would print an absent value as "nil".
            if let detail { row["detail"] = detail }
            return row
        }
        let approvals: [[String: Any]] = try await kernel.approvals.pending(userID: principal.user.id).filter { $0.expiresAt > now }.map { approval in
            var row: [String: Any] = [
                "id": approval.id, "what": Self.requestName(approval.kind, messages: kernel.messages), "device": approval.deviceName ?? kernel.messages.text("account.approvals.a_device"),
                "when": PageValue.time(approval.createdAt, now: now, messages: kernel.messages).mustache, "not_me": approval.kind == "sign_in", "csrf": csrf,
            ]
            if let platform = approval.platform { row["platform"] = platform }
            if let network = approval.network { row["network"] = network }
            return row
        }
        let who = principal.user.email ?? principal.user.username ?? principal.user.displayName ?? principal.user.id.lowercased
        var grants: [[String: Any]] = []
        for grant in try await openID.consents.grants(of: principal.user.id) {
            let name = try await openID.clients.find(grant.clientID)?.name ?? grant.clientID
            grants.append(["client_id": grant.clientID, "name": name, "scopes": grant.scopes.joined(separator: ", "), "created": (try? Date(grant.createdAt, strategy: .iso8601)).map { Self.exact($0, messages: kernel.messages) } ?? grant.createdAt, "csrf": csrf,
            ])
        }
        let sections: [[String: Any]] = login.providers.compactMap { provider in
            provider.accountStep(for: principal).map { ["html": renderer.render($0, csrf: csrf, action: "/account/\(type(of: provider).id)/")] }
        }
        let notice = error == nil ? NoticeCookie.notice(request, box: login.box, session: principal.session.id) : nil
        return renderer.page(
            title: kernel.messages.text("account.title"),
            content: renderer.render("account", [
                "who": who, "sessions": rows, "grants": grants, "has_grants": !grants.isEmpty, "sections": sections,
                "approvals": approvals, "has_approvals": !approvals.isEmpty, "display_name": principal.user.displayName ?? "",
                "confirm": Self.confirmation(principal.user, messages: kernel.messages), "csrf": csrf,
                "languages": Self.languageChoices(kernel.messages, chosen: kernel.messages.available(principal.user.locale)),
                "no_language": principal.user.locale == nil,
            ]),
            error: error, status: status, signedIn: true, csrf: csrf, cookies: notice == nil ? [] : [NoticeCookie.spent], notice: notice)
    }

    /// A pending request answered on this page (contract §18): approved with the number the other
    /// device shows, denied, or "Not me". The browser's own session cookie is the proof that the
    /// API asks as a refresh token: an access token alone never reaches this page.
    func answer(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        let id = context.parameters.get("id") ?? ""
        guard let pending = try await kernel.approvals.pending(userID: principal.user.id).first(where: { $0.id == id }) else {
            return try await show(request, error: kernel.messages.text("account.error.answered"), status: .notFound)
        }
        let what = Self.requestName(pending.kind, messages: kernel.messages)
        do {
            switch context.parameters.get("answer") {
            case "approve":
                let typed = (form["match_code"] ?? "").filter { !$0.isWhitespace }
                guard !typed.isEmpty, typed.count <= 8, typed.allSatisfy(\.isASCII), typed.allSatisfy(\.isNumber) else {
                    return try await show(request, error: kernel.messages.text("account.error.type_number"), status: .badRequest)
                }
                try await ApprovalRoutes.approve(id, matchCode: typed, by: principal, kernel: kernel)
                return done(kernel.messages.text("account.notice.approved", ["what": what]), principal)
            case "deny":
                try await ApprovalRoutes.deny(id, reason: nil, by: principal, kernel: kernel)
                return done(kernel.messages.text("account.notice.denied", ["what": what]), principal)
            case "not-me":
                try await ApprovalRoutes.deny(id, reason: "not_me", by: principal, kernel: kernel)
                let mailed = principal.user.email != nil && principal.user.emailVerified
                return done(kernel.messages.text(mailed ? "account.notice.not_me_mailed" : "account.notice.not_me", ["what": what]), principal)
            default:
                return try await show(request, error: kernel.messages.text("account.error.no_such_answer"), status: .notFound)
            }
        } catch let error as AuthError where error.code == "INVALID_CODE" {
            guard case .number(let left)? = error.details?["attempts_remaining"], left > 0 else {
                return try await show(request, error: kernel.messages.text("account.error.wrong_number_refused"), status: .badRequest)
            }
            return try await show(request, error: kernel.messages.plural("account.error.wrong_number", count: Int(left)), status: .badRequest)
        } catch let error as AuthError {
            return try await show(request, error: kernel.messages.sentence(error), status: error.status)
        }
    }

    /// A session as a person recognises it: the app it signed in to, else the device's name, else
    /// its browser and system ("Firefox on Windows"); the detail says what the name leaves out.
    static func named(_ session: SessionRecord, app: String?, messages: Messages) -> (name: String, detail: String?) {
        let platform = session.platform.map { BrowserLabel.worded($0, messages: messages) }
        let label = session.deviceName ?? platform
        if let app { return (app, label) }
        if let name = session.deviceName { return (name, platform) }
        if let platform { return (platform, nil) }
        return (messages.text(session.isAPIKey ? "account.session.an_api_key" : session.isBrowser ? "account.session.a_browser" : "account.session.an_app"), nil)
    }

    /// A time as the page's language writes it exactly ("28 Nov 2026, 11:05 UTC").
    static func exact(_ date: Date, messages: Messages) -> String {
        guard case .list(let rows) = PageValue.time(date, now: date, messages: messages), case .text(let exact)? = rows.first?["exact"] else { return "" }
        return exact
    }

    /// What "Delete my account" asks to be typed: the email, else the user name, else DELETE (in
    /// the page's language).
    static func confirmation(_ user: UserRecord, messages: Messages) -> String { user.email ?? user.username ?? messages.text("account.delete.word") }

    /// The display name, edited.
    func profile(_ form: PageForm, _ request: Request) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        do {
            let name = try DisplayName.validate(form["display_name"])
            let user = try await kernel.users.update(principal.user.id) { $0.displayName = name }
            await kernel.events.emit("user.updated", AccountEvents.data(user))
            return done(name.map { kernel.messages.text("account.notice.name_set", ["name": $0]) } ?? kernel.messages.text("account.notice.name_removed"), principal)
        } catch let error as AuthError {
            return try await show(request, error: kernel.messages.sentence(error), status: error.status)
        }
    }

    /// The languages there are, each named in itself ("Deutsch"), the person's own marked.
    static func languageChoices(_ messages: Messages, chosen: String?) -> [[String: Any]] {
        messages.languages.map { tag in
            let name = Locale(identifier: tag).localizedString(forIdentifier: tag) ?? tag
            return ["tag": tag, "name": name.prefix(1).uppercased() + name.dropFirst(), "selected": tag == chosen]
        }
    }

    /// The person's language (`locale`), chosen from those there are; the empty choice clears it.
    func language(_ form: PageForm, _ request: Request) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        let chosen = form["locale"] ?? ""
        guard chosen.isEmpty || kernel.messages.languages.contains(chosen) else {
            return try await show(request, error: kernel.messages.text("account.language.unknown"), status: .badRequest)
        }
        let user = try await kernel.users.update(principal.user.id) { $0.locale = chosen.isEmpty ? nil : chosen }
        await kernel.events.emit("user.updated", AccountEvents.data(user))
        let name = Self.languageChoices(kernel.messages, chosen: nil).first { $0["tag"] as? String == chosen }?["name"] as? String
        // The notice is in the language just chosen where the browser names none authd has.
        RequestLanguage.current?.fallBack(to: user.locale)
        return done(name.map { kernel.messages.text("account.notice.language_set", ["language": $0]) } ?? kernel.messages.text("account.notice.language_removed"), principal)
    }

    /// "Delete my account": the typed confirmation and a fresh sign-in (contract §12), then what
    /// `DELETE /api/v1/auth/account` does; the browser is signed out.
    func delete(_ form: PageForm, _ request: Request) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        let expected = Self.confirmation(principal.user, messages: kernel.messages)
        guard (form["confirm"] ?? "").trimmingCharacters(in: .whitespaces).lowercased() == expected.lowercased() else {
            return try await show(request, error: kernel.messages.text("account.error.type_to_delete", ["expected": expected]), status: .badRequest)
        }
        guard kernel.sessions.isFresh(principal) else {
            return try await show(request, error: kernel.messages.text("account.error.too_old_to_delete"), status: .forbidden)
        }
        await kernel.accountDeletion.run(for: principal.user)
        try await kernel.users.delete(principal.user.id)
        await kernel.audit.record("account_deleted", user: principal.user.id)
        return renderer.page(
            title: kernel.messages.text("account.deleted.title"),
            content: renderer.render("message", ["message": kernel.messages.text("account.deleted.message")]),
            cookies: [BrowserCookie.cookie("", maxAge: 0)])
    }

    /// How the page names a request of `kind`.
    static func requestName(_ kind: String, messages: Messages) -> String {
        switch kind {
        case "sign_in": messages.text("account.request.sign_in")
        case "password_reset": messages.text("account.request.password_reset")
        default: messages.text("account.request.other")
        }
    }

    func endGrant(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        let client = context.parameters.get("client") ?? ""
        let name = try await openID.clients.find(client)?.name ?? kernel.messages.text("account.grants.the_app")
        _ = try await openID.endGrant(of: principal.user.id, client: client)
        return done(kernel.messages.text("account.notice.grant_ended", ["name": name]), principal)
    }

    func end(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        guard let id = context.parameters.get("id").flatMap({ UUID(uuidString: $0) }),
            let target = try await kernel.sessions.sessions(of: principal.user.id).first(where: { $0.id == id })
        else { return try await show(request, error: kernel.messages.text("account.error.session_ended"), status: .notFound) }
        // Ending an API key's session is a credential change: a fresh sign-in (contract §12).
        if target.isAPIKey, !kernel.sessions.isFresh(principal) {
            return try await show(request, error: kernel.messages.text("account.error.api_key_too_old"), status: .forbidden)
        }
        try await kernel.sessions.revoke(id, of: principal.user.id)
        return done(kernel.messages.text("account.notice.signed_out_there"), principal)
    }
}
