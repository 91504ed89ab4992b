import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The operator's console, `/admin` (contract §14): server-rendered pages under the §13 page rules.
/// Only the browser's cookie is read, never a Bearer; the role is checked on every request; the
/// session's `amr` must hold `passkey` or `totp`; every change needs a fresh sign-in, goes through
/// the admin API's own services and is audited with the operator's email.
struct ConsoleRoutes: Sendable {
    let kernel: Kernel
    let renderer: PageRenderer
    let login: LoginRoutes
    let operators: Operators
    let overview: ConsoleOverview
    let administration: UserAdministration
    /// The providers whose account steps add a passkey or an authenticator app.
    let factorProviders: [any PageSignIn]
    let store: any AuthStore
    let openIDClients: OpenIDClients
    let serviceKeys: ServiceKeys
    let webhookSettings: WebhookSettings
    /// This instance's latest webhook attempts, when webhooks are configured.
    let recentDeliveries: RecentDeliveries?
    /// `DATA/audit.jsonl`, when the server keeps one.
    let auditPath: String?

    /// The second factors the console takes as a sign-in's proof (contract §14).
    static let strongMethods: Set<String> = ["passkey", "totp"]
    static let pageSize = 50

    func add(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get("admin") { request, context in try await routes.page(request, context) { try await routes.showOverview($0) } }
        router.get("admin/users") { request, context in try await routes.page(request, context) { try await routes.showUsers($0, request) } }
        router.get("admin/users/:id") { request, context in
            try await routes.page(request, context) { try await routes.showUser($0, id: context.parameters.get("id")) }
        }
        router.post("admin/users/new") { request, context in
            try await routes.change(request, context) { op, form in try await routes.createUser(op, form) }
        }
        router.post("admin/invitations") { request, context in
            try await routes.change(request, context) { op, form in try await routes.invite(op, form) }
        }
        router.post("admin/users/:id/:action") { request, context in
            try await routes.change(request, context) { op, form in
                try await routes.changeUser(op, id: context.parameters.get("id"), action: context.parameters.get("action") ?? "", form: form)
            }
        }
        router.post("admin/reauth") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.reauth(request, returnTo: form["return_to"]) }
        }
        router.get("admin/setup") { request, context in
            try await routes.login.guarded(request, context) { try await routes.showSetup(request.uri.queryParameters.get("token") ?? "") }
        }
        router.post("admin/setup") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.setup(form) }
        }
        addClientPages(to: router)
        addRecordPages(to: router)
    }

    // MARK: - The gate

    /// An operator signed in as the console asks, and the token of their forms.
    struct Operator: Sendable {
        var principal: Principal
        var csrf: String
        var email: String
        /// A form refused for a stale sign-in, kept for this page (``ConsoleDraft``).
        var draft: ConsoleDraft?
        /// The notice a change left for the page it redirected to (``NoticeCookie``).
        var notice: String?
        var actor: UserAdministration.Actor { .init(event: "admin_console", account: email) }
    }

    /// A console page: the pages' gates, then the cookie's session, the role and a passkey or TOTP
    /// in its `amr`; else a sign-in, a refusal or how to add one.
    func page(_ request: Request, _ context: AuthRequestContext, _ body: (Operator) async throws -> Response) async throws -> Response {
        try await login.guarded(request, context) {
            switch try await admit(request) {
            case .operator(var op):
                op.draft = ConsoleDraft.unsealed(request, box: login.box, user: op.principal.user.id, page: request.uri.path, now: kernel.clock.now())
                op.notice = NoticeCookie.notice(request, box: login.box, session: op.principal.session.id)
                var response = try await body(op)
                // Refilled once: the draft is spent; shown once: the notice too.
                if op.draft != nil { response.setCookie(ConsoleDraft.spent) }
                if op.notice != nil { response.setCookie(NoticeCookie.spent) }
                return response
            case .answer(let response): return response
            }
        }
    }

    enum Admission {
        case `operator`(Operator)
        case answer(Response)
    }

    func admit(_ request: Request) async throws -> Admission {
        guard let principal = try await login.browserPrincipal(request) else {
            let back = request.uri.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "%2Fadmin"
            return .answer(PageGate.redirect(to: "/login?return_to=" + back, status: .found))
        }
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        guard try await operators.isOperator(principal.user.id) else {
            kernel.logger.notice("console refused a user without the operator role", metadata: ["user.id": "\(principal.user.id.lowercased)"])
            return .answer(message(kernel.messages.text("console.not_operator"), status: .forbidden, csrf: csrf))
        }
        guard !Self.strongMethods.isDisjoint(with: principal.session.amr) else { return .answer(factorPage(principal, csrf: csrf)) }
        let email = principal.user.email ?? principal.user.id.lowercased
        return .operator(Operator(principal: principal, csrf: csrf, email: email))
    }

    /// A console form: the page's gates and Origin, the operator, the form's CSRF token, and a
    /// sign-in younger than `auth.fresh_auth`.
    func change(_ request: Request, _ context: AuthRequestContext, _ body: (Operator, PageForm) async throws -> Response) async throws -> Response {
        try await login.posted(request, context) { form in
            let op: Operator
            switch try await admit(request) {
            case .operator(let admitted): op = admitted
            case .answer(let response): return response
            }
            guard login.carriesCSRF(form, of: op.principal) else {
                return message(kernel.messages.text("console.form_out_of_date"), status: .forbidden, csrf: op.csrf)
            }
            guard kernel.sessions.isFresh(op.principal) else {
                // The form is kept across the sign-in, and the sign-in comes back to its page.
                let draft = ConsoleDraft.of(form, action: request.uri.path, user: op.principal.user.id, now: kernel.clock.now())
                let cookie = draft.cookie(box: login.box)
                var response = renderer.page(
                    title: kernel.messages.text("console.reauth.title"),
                    content: renderer.render("admin-reauth", ["csrf": op.csrf, "return_to": draft.page, "kept": cookie != nil && !draft.fields.isEmpty, "too_long": cookie == nil]),
                    status: .forbidden, signedIn: true, csrf: op.csrf, wide: true)
                if let cookie { response.setCookie(cookie) }
                return response
            }
            return try await body(op, form)
        }
    }

    func reauth(_ request: Request, returnTo: String? = nil) async throws -> Response {
        if let principal = try await login.browserPrincipal(request, acceptingPIN: true) { try await kernel.sessions.revoke(principal.session.id, of: principal.user.id) }
        // Back to the console page the refused form was on; only a console page.
        var back = "/admin"
        if let returnTo, PageGate.returnTo(returnTo) == returnTo, returnTo == "/admin" || returnTo.hasPrefix("/admin/") { back = returnTo }
        var response = PageGate.redirect(to: "/login?return_to=" + (back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "%2Fadmin"))
        response.setCookie(BrowserCookie.cookie("", maxAge: 0))
        return response
    }

    /// An operator signed in without a passkey or an authenticator app: how to add one, and nothing else.
    func factorPage(_ principal: Principal, csrf: String) -> Response {
        let sections: [[String: Any]] = factorProviders.compactMap { provider in
            provider.accountStep(for: principal).map { ["html": renderer.render($0, csrf: csrf, action: "/account/\(type(of: provider).id)/")] }
        }
        return renderer.page(
            title: kernel.messages.text("console.factor.title"),
            content: renderer.render("admin-factor", ["sections": sections, "has_sections": !sections.isEmpty, "csrf": csrf]), signedIn: true,
            csrf: csrf, wide: true)
    }

    func message(_ text: String, status: HTTPResponse.Status, csrf: String = "") -> Response {
        renderer.page(title: kernel.messages.text("console.title"), content: renderer.render("message", ["message": text]), status: status, signedIn: !csrf.isEmpty, csrf: csrf, wide: true)
    }

    /// The console's navigation: each page's link (its label a catalog key), the one shown marked.
    static let sections: [(path: String, label: String, page: String, record: String?)] = [
        ("/admin", "console.nav.overview", "admin-overview", nil), ("/admin/users", "console.nav.users", "admin-users", "admin-user"),
        ("/admin/clients", "console.nav.apps", "admin-clients", "admin-client"), ("/admin/keys", "console.nav.keys", "admin-keys", nil),
        ("/admin/webhooks", "console.nav.webhooks", "admin-webhooks", nil), ("/admin/audit", "console.nav.audit", "admin-audit", nil),
        ("/admin/config", "console.nav.config", "admin-config", nil),
    ]

    /// The server's shipped catalogs alone (no operator's `DATA/locales/`), for what is drawn
    /// without a kernel at hand: the tests' chart and rows.
    static let shippedMessages: Messages = {
        let messages = Messages(folder: nil)
        try? messages.register(ServerCatalogs.declarations, owner: "authd", prefix: nil)
        return messages
    }()

    /// The navigation's links, in the task's language: `aria-current="page"` on the page's own
    /// link, `"true"` on its section's when the page is one record of it (a user, an app).
    static func navigation(current template: String, messages: Messages = shippedMessages) -> [[String: Any]] {
        sections.map { section in
            var item: [String: Any] = ["href": section.path, "label": messages.text(section.label)]
            if section.page == template { item["current"] = "page" } else if section.record == template { item["current"] = "true" }
            return item
        }
    }

    func console(_ title: String, _ template: String, _ values: [String: Any], _ op: Operator, error: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        var values = values
        values["csrf"] = op.csrf
        // A form refused for a stale sign-in, as it was; not over an error's own draft.
        if values["notice"] == nil, let notice = op.notice { values["notice"] = notice }
        var notice = ""
        if let draft = op.draft, error == nil {
            draft.apply(to: &values)
            let what = kernel.messages.text(draft.fields.isEmpty ? "console.draft.empty" : ConsoleDraft.noticeKey)
            notice = "<p class=\"notice\" role=\"status\" id=\"draft-notice\">\(what)</p>\n"
        }
        let content = renderer.render("admin-nav", ["operator": op.email, "items": Self.navigation(current: template, messages: kernel.messages)]) + notice + renderer.render(template, values)
        return renderer.page(title: title, content: content, error: error, status: status, signedIn: true, csrf: op.csrf, wide: true)
    }

    // MARK: - Pages

    func showOverview(_ op: Operator) async throws -> Response {
        let facts = try await overview.facts()
        return console(kernel.messages.text("console.title"), "admin-overview", facts.values, op)
    }

    func showUsers(
        _ op: Operator, _ request: Request?, invited: (email: String, url: String)? = nil, error: String? = nil, status: HTTPResponse.Status = .ok,
        draft: ConsoleDraft? = nil
    ) async throws -> Response {
        let parameters = request?.uri.queryParameters
        let query = String((parameters?.get("query") ?? "").prefix(AdminAPIRoutes.maxQueryLength)).lowercased()
        let after = parameters?.get("after").flatMap(UUID.init(uuidString:))
        let page = try await kernel.users.page(matching: query, after: after, limit: Self.pageSize + 1)
        let shown = page.prefix(Self.pageSize)
        let rows: [[String: Any]] = shown.map { user in
            ["id": user.id.lowercased, "name": user.email ?? user.username ?? kernel.messages.text("console.users.anonymous"), "created": when(user.createdAt),
             "status": kernel.messages.text(user.disabledAt == nil ? "console.users.active" : "console.users.disabled"),
             "providers": user.authProviders.joined(separator: ", ")]
        }
        var values: [String: Any] = ["query": query, "has_query": !query.isEmpty, "users": rows, "has_users": !rows.isEmpty]
        if page.count > Self.pageSize, let last = shown.last {
            values["next"] = "/admin/users?query=\(query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&after=\(last.id.lowercased)"
        }
        if let invited { values["invited"] = ["email": invited.email, "url": invited.url] }
        let pending = try await kernel.invitations.list()
        values["invitations"] = pending.map { ["email": $0.email, "groups": $0.groups.joined(separator: ", "), "expires": when($0.expiresAt)] }
        values["has_invitations"] = !pending.isEmpty
        // A refused form, refilled (the error says why).
        if let draft {
            draft.apply(to: &values)
        }
        return console(kernel.messages.text("console.nav.users"), "admin-users", values, op, error: error, status: status)
    }

    func showUser(
        _ op: Operator, id: String?, error: String? = nil, status: HTTPResponse.Status = .ok, metadataDraft: String? = nil, notice: String? = nil
    ) async throws -> Response {
        guard let id = id.flatMap(UUID.init(uuidString:)), let user = try await kernel.users.user(id: id) else {
            return console(kernel.messages.text("console.nav.users"), "message", ["message": kernel.messages.text("console.user.not_found")], op, status: .notFound)
        }
        let sessions = try await kernel.sessions.sessions(of: user.id).sorted { $0.createdAt > $1.createdAt }
        let rows: [[String: Any]] = sessions.map { s in
            ["name": s.deviceName ?? kernel.messages.text(s.isBrowser ? "console.user.browser" : "console.user.an_app"),
             "kind": sessionKind(s.isAPIKey ? "api_key" : s.kind?.rawValue ?? "app"),
             "amr": s.amr.joined(separator: ", "), "created": when(s.createdAt), "used": when(s.lastUsedAt)]
        }
        let confirm = user.email ?? user.id.lowercased
        var values: [String: Any] = [
            "id": user.id.lowercased, "email": user.email ?? "", "verified": user.emailVerified, "username": user.username ?? "",
            "display_name": user.displayName ?? "", "created": when(user.createdAt), "disabled": user.disabledAt != nil,
            "identities": user.identities.map { ["provider": $0.provider, "subject": $0.subject] },
            "credentials": user.secrets.keys.sorted().joined(separator: ", "), "sessions": rows, "has_sessions": !rows.isEmpty,
            "app_metadata": metadataDraft ?? Self.json(.object(user.appMetadata)), "user_metadata": Self.json(.object(user.userMetadata)),
            "confirm": confirm, "resets": kernel.resets.all.map { ["kind": $0.name, "label": resetButton($0.name)] }, "groups": user.groups.joined(separator: ", "),
        ]
        var removable: [[String: Any]] = kernel.signInHooks.factors.filter { !$0.enrollments(for: user).isEmpty }.map { factor in
            let names = factor.enrollments(for: user).compactMap(\.name)
            let left = factor.enrollments(for: user).compactMap(\.remaining).first
            let detail = !names.isEmpty ? names.joined(separator: ", ") : left.map { kernel.messages.plural("console.user.left", count: $0) } ?? ""
            return ["name": factor.name, "title": credentialTitle(factor.name), "label": credentialRemoval(factor.name), "detail": detail]
        }
        if user.secrets[UserAdministration.passwordCredential] != nil {
            let name = UserAdministration.passwordCredential
            removable.append(["name": name, "title": credentialTitle(name), "label": credentialRemoval(name), "detail": ""])
        }
        values["removable"] = removable
        values["has_removable"] = !removable.isEmpty
        // Only when there is one: an empty value would still show the notice's box.
        if let notice { values["notice"] = notice }
        return console(user.email ?? user.username ?? kernel.messages.text("console.user.title"), "admin-user", values, op, error: error, status: status)
    }

    /// The catalog keys of a way to sign in the console names: its heading, how a sentence names
    /// it, its "Remove" button, and the error when the account has none.
    static let credentialKeys: [String: (title: String, described: String, remove: String, missing: String)] = [
        "passkey": ("console.credential.passkey.title", "console.credential.passkey.described", "console.credential.passkey.remove", "console.credential.passkey.missing"),
        "totp": ("console.credential.totp.title", "console.credential.totp.described", "console.credential.totp.remove", "console.credential.totp.missing"),
        "recovery_code": (
            "console.credential.recovery_code.title", "console.credential.recovery_code.described", "console.credential.recovery_code.remove",
            "console.credential.recovery_code.missing"
        ),
        UserAdministration.passwordCredential: (
            "console.credential.password.title", "console.credential.password.described", "console.credential.password.remove", "console.credential.password.missing"
        ),
    ]

    /// The heading the console gives a way to sign in, in the task's language.
    func credentialTitle(_ name: String) -> String {
        Self.credentialKeys[name].map { kernel.messages.text($0.title) } ?? name
    }

    /// How a sentence names a way to sign in ("every passkey"), in the task's language.
    func credentialDescribed(_ name: String) -> String {
        Self.credentialKeys[name].map { kernel.messages.text($0.described) } ?? kernel.messages.text("console.credential.other", ["name": name])
    }

    /// The button that removes a way to sign in ("Remove every passkey").
    func credentialRemoval(_ name: String) -> String {
        Self.credentialKeys[name].map { kernel.messages.text($0.remove) } ?? kernel.messages.text("console.user.remove", ["label": credentialDescribed(name)])
    }

    /// The error when the account has no such way to sign in.
    func credentialMissing(_ name: String) -> String {
        Self.credentialKeys[name].map { kernel.messages.text($0.missing) } ?? kernel.messages.text("console.user.nothing_to_remove", ["what": name])
    }

    /// The password provider's reset ("the password"): the console words it itself; another
    /// provider's reset is named as the provider registered it.
    static let passwordReset = "the " + UserAdministration.passwordCredential

    /// A reset's button ("Mail a reset of the password").
    func resetButton(_ name: String) -> String {
        name == Self.passwordReset ? kernel.messages.text("console.reset.password.button") : kernel.messages.text("console.user.reset", ["label": name])
    }

    /// The error when the account has nothing of this kind to reset.
    func resetMissing(_ name: String) -> String {
        name == Self.passwordReset
            ? kernel.messages.text("console.reset.password.missing")
            : kernel.messages.text("console.user.nothing_to_reset", ["what": name.replacingOccurrences(of: "the ", with: "")])
    }

    /// The notice once a reset is mailed to `email`.
    func resetMailed(_ name: String, to email: String?) -> String {
        let to = email ?? kernel.messages.text("console.user.the_account")
        return name == Self.passwordReset
            ? kernel.messages.text("console.reset.password.mailed", ["email": to]) : kernel.messages.text("console.user.reset_mailed", ["what": name, "email": to])
    }

    /// The catalog keys of the session kinds the console names; another is shown as it is.
    static let sessionKindKeys = [
        "api_key": "console.user.kind.api_key", "app": "console.user.kind.app", "browser": "console.user.kind.browser", "client": "console.user.kind.client",
    ]

    /// A session's kind in the task's language.
    func sessionKind(_ kind: String) -> String {
        Self.sessionKindKeys[kind].map { kernel.messages.text($0) } ?? kind
    }

    /// A time for a console template, in the task's language: `words` ("3 minutes ago", for a time
    /// past), `exact` ("28 Nov 2026, 11:05 UTC", for one ahead) and `iso`.
    func when(_ date: Date) -> Any {
        PageValue.time(date, now: kernel.clock.now(), messages: kernel.messages).mustache
    }

    static func json(_ value: JSONValue) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(value))) ?? [:], options: [.prettyPrinted, .sortedKeys]))
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    // MARK: - Changes

    func changeUser(_ op: Operator, id: String?, action: String, form: PageForm) async throws -> Response {
        guard let id = id.flatMap(UUID.init(uuidString:)), let user = try await kernel.users.user(id: id) else {
            return console(kernel.messages.text("console.nav.users"), "message", ["message": kernel.messages.text("console.user.not_found")], op, status: .notFound)
        }
        let back = PageGate.redirect(to: "/admin/users/\(user.id.lowercased)")
        do {
            switch action {
            case "profile":
                let text = form["app_metadata"] ?? "{}"
                guard let parsed = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), case .object = parsed else {
                    return try await showUser(op, id: user.id.lowercased, error: kernel.messages.text("console.user.bad_metadata"), status: .badRequest, metadataDraft: text)
                }
                let name = form["display_name"].map { $0.isEmpty ? nil : $0 }
                _ = try await administration.update(user, .init(appMetadata: parsed, displayName: .some(name ?? nil)), by: op.actor)
                return back
            case "groups":
                _ = try await administration.update(user, .init(groups: Self.list(form["groups"])), by: op.actor)
                return back
            case "disable", "enable":
                _ = try await administration.update(user, .init(disabled: action == "disable"), by: op.actor)
                return back
            case "sessions":
                try await administration.endSessions(of: user, by: op.actor)
                return back
            case "remove":
                let name = form["credential"] ?? ""
                guard try await administration.removeCredential(name, from: user, by: op.actor) else {
                    return try await showUser(op, id: user.id.lowercased, error: credentialMissing(name), status: .conflict)
                }
                let what = credentialDescribed(name)
                let notice = user.email.map { kernel.messages.text("console.user.removed_mailed", ["what": what, "email": $0]) }
                    ?? kernel.messages.text("console.user.removed", ["what": what])
                return try await showUser(op, id: user.id.lowercased, notice: notice)
            case "reset":
                guard let sender = kernel.resets.all.first(where: { $0.name == form["kind"] }) else {
                    return try await showUser(op, id: user.id.lowercased, error: kernel.messages.text("console.user.no_such_reset"), status: .badRequest)
                }
                guard try await sender.send(user) else {
                    return try await showUser(op, id: user.id.lowercased, error: resetMissing(sender.name), status: .conflict)
                }
                await kernel.audit.record("admin_console", user: user.id, account: op.email, reason: "send reset: \(sender.name)")
                return try await showUser(op, id: user.id.lowercased, notice: resetMailed(sender.name, to: user.email))
            case "delete":
                guard form["confirm"] == (user.email ?? user.id.lowercased) else {
                    return try await showUser(op, id: user.id.lowercased, error: kernel.messages.text("console.user.confirm_delete"), status: .badRequest)
                }
                guard user.id != op.principal.user.id else {
                    return try await showUser(op, id: user.id.lowercased, error: kernel.messages.text("console.user.own_account"), status: .badRequest)
                }
                try await administration.delete(user, by: op.actor)
                return PageGate.redirect(to: "/admin/users")
            default:
                return console(kernel.messages.text("console.nav.users"), "message", ["message": kernel.messages.text("console.user.no_such_change")], op, status: .notFound)
            }
        } catch let error as AuthError {
            return try await showUser(op, id: user.id.lowercased, error: kernel.messages.sentence(error), status: error.status, metadataDraft: form["app_metadata"])
        }
    }

    /// "Invite a person": the link is mailed, and shown this once.
    func invite(_ op: Operator, _ form: PageForm) async throws -> Response {
        do {
            let made = try await InvitationSender(kernel: kernel).invite(
                email: form["email"] ?? "", groups: Self.list(form["groups"]), displayName: (form["display_name"] ?? "").isEmpty ? nil : form["display_name"],
                by: op.actor)
            return try await showUsers(op, nil, invited: (made.invitation.email, made.url))
        } catch let error as AuthError {
            return try await showUsers(op, nil, error: kernel.messages.sentence(error), status: error.status)
        }
    }

    /// A change's answer: the page it leaves, with a one-line notice shown there once.
    func redirect(to path: String, notice: String, for op: Operator) -> Response {
        var response = PageGate.redirect(to: path)
        response.setCookie(NoticeCookie.cookie(notice, box: login.box, session: op.principal.session.id))
        return response
    }

    /// "Create a user": an account for an address, made at once (no mail); its page next.
    func createUser(_ op: Operator, _ form: PageForm) async throws -> Response {
        do {
            let user = try await administration.create(
                email: form["email"] ?? "", displayName: (form["display_name"] ?? "").isEmpty ? nil : form["display_name"], groups: Self.list(form["groups"]),
                emailVerified: form["email_verified"] == "on", in: store, by: op.actor)
            let notice = kernel.messages.text(user.emailVerified ? "console.users.created_verified" : "console.users.created_unverified", ["email": user.email ?? ""])
            return redirect(to: "/admin/users/\(user.id.lowercased)", notice: notice, for: op)
        } catch let error as AuthError {
            var draft = ConsoleDraft.of(form, action: "/admin/users/new", user: op.principal.user.id, now: kernel.clock.now())
            draft.fields["email"] = form["email"] ?? ""
            var op = op
            op.draft = nil
            return try await showUsers(op, nil, error: kernel.messages.sentence(error), status: error.status, draft: draft)
        }
    }

    // MARK: - The first operator's invite

    func showSetup(_ token: String) async throws -> Response {
        guard let invite = try await kernel.tokens.peek(purpose: Operators.invitePurpose, token: token) else {
            return message(kernel.messages.text("console.setup.invalid"), status: .notFound)
        }
        return renderer.page(title: kernel.messages.text("console.setup.title"), content: renderer.render("admin-setup", ["email": invite.subject, "token": token]), wide: true)
    }

    func setup(_ form: PageForm) async throws -> Response {
        guard let invite = try await kernel.tokens.redeem(purpose: Operators.invitePurpose, token: form["token"] ?? "") else {
            return message(kernel.messages.text("console.setup.invalid"), status: .notFound)
        }
        // The link proves the address as a mailed code would: the account is that email's, verified.
        let user = try await kernel.users.signIn(
            .init(identity: Identity(provider: "email", subject: invite.subject), email: invite.subject, emailVerified: true), linkingToUser: nil,
            operatorInvited: true)
        try await operators.grant(user, by: "an invite")
        await kernel.audit.record("admin_console", user: user.id, account: invite.subject, reason: "operator invite redeemed")
        kernel.logger.notice("console operator made by an invite", metadata: ["user.id": "\(user.id.lowercased)"])
        // Signed in to add a passkey or an authenticator app; the console then asks for a sign-in with it.
        switch try await kernel.sessions.signIn(user, amr: ["invite"], device: try DeviceInfo(name: "Browser", platform: nil), kind: .browser) {
        case .session(let session):
            return try login.signedIn(session, pre: PreSignIn.new(returnTo: "/admin", now: kernel.clock.now()))
        case .secondFactorRequired:
            // The account has second factors already: a sign-in with them is the way in.
            return PageGate.redirect(to: "/login?return_to=%2Fadmin")
        }
    }
}
