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
        router.post("account/:provider/:action") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.providerPost(form, request, context) }
        }
    }

    /// A provider's account form (adding a passkey): its next step, or back to `/account`.
    func providerPost(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: "This form is out of date. Try again.", status: .forbidden)
        }
        let id = context.parameters.get("provider") ?? ""
        guard let provider = login.providers.first(where: { type(of: $0).id == id }) else {
            return try await show(request, error: "There is no such setting.", status: .notFound)
        }
        do {
            guard let step = try await provider.accountPost(action: context.parameters.get("action") ?? "", form: form, principal: principal, context: context)
            else { return PageGate.redirect(to: "/account") }
            if step.returnsToAccount { return done(step.notice) }
            return renderer.page(
                title: "Your account", content: renderer.render(step, csrf: csrf, action: "/account/\(id)/"), error: step.error, status: step.status,
                signedIn: true, csrf: csrf)
        } catch let error as AuthError where error.code == "REAUTH_REQUIRED" {
            return try await show(request, error: "Sign out and in again first: your sign-in is too old for this.", status: .forbidden)
        } catch let error as AuthError {
            return try await show(request, error: LoginRoutes.sentence(error), status: error.status)
        }
    }

    /// Back to `/account`, which shows `notice` once.
    func done(_ notice: String?) -> Response {
        var response = PageGate.redirect(to: "/account")
        if let notice { response.setCookie(NoticeCookie.cookie(notice, box: login.box)) }
        return response
    }

    func show(_ request: Request, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount", status: .found) }
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        let sessions = try await kernel.sessions.sessions(of: principal.user.id).sorted { $0.createdAt > $1.createdAt }
        let rows: [[String: Any]] = sessions.map { session in
            [
                "id": session.id.lowercased, "name": session.deviceName ?? (session.isBrowser ? "A browser" : "An app"),
                "kind": session.isAPIKey ? "API key" : session.isBrowser ? "browser" : "app",
                "created": Timestamp.string(session.createdAt), "current": session.id == principal.session.id, "csrf": csrf,
            ]
        }
        let who = principal.user.email ?? principal.user.username ?? principal.user.id.lowercased
        var grants: [[String: Any]] = []
        for grant in try await openID.consents.grants(of: principal.user.id) {
            let name = try await openID.clients.find(grant.clientID)?.name ?? grant.clientID
            grants.append(["client_id": grant.clientID, "name": name, "scopes": grant.scopes.joined(separator: ", "), "created": grant.createdAt, "csrf": csrf])
        }
        let sections: [[String: Any]] = login.providers.compactMap { provider in
            provider.accountStep(for: principal).map { ["html": renderer.render($0, csrf: csrf, action: "/account/\(type(of: provider).id)/")] }
        }
        let notice = error == nil ? NoticeCookie.notice(request, box: login.box) : nil
        return renderer.page(
            title: "Your account",
            content: renderer.render("account", ["who": who, "sessions": rows, "grants": grants, "has_grants": !grants.isEmpty, "sections": sections]),
            error: error, status: status, signedIn: true, csrf: csrf, cookies: notice == nil ? [] : [NoticeCookie.spent], notice: notice)
    }

    func endGrant(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: "This form is out of date. Try again.", status: .forbidden)
        }
        let client = context.parameters.get("client") ?? ""
        let name = try await openID.clients.find(client)?.name ?? "The app"
        _ = try await openID.endGrant(of: principal.user.id, client: client)
        return done("\(name) no longer signs you in; it asks again next time.")
    }

    func end(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let principal = try await login.browserPrincipal(request) else { return PageGate.redirect(to: "/login?return_to=%2Faccount") }
        guard login.carriesCSRF(form, of: principal) else {
            return try await show(request, error: "This form is out of date. Try again.", status: .forbidden)
        }
        guard let id = context.parameters.get("id").flatMap({ UUID(uuidString: $0) }),
            let target = try await kernel.sessions.sessions(of: principal.user.id).first(where: { $0.id == id })
        else { return try await show(request, error: "That session has ended already.", status: .notFound) }
        // Ending an API key's session is a credential change: a fresh sign-in (contract §12).
        if target.isAPIKey, !kernel.sessions.isFresh(principal) {
            return try await show(request, error: "Sign in again to end an API key: your sign-in is too old for that.", status: .forbidden)
        }
        try await kernel.sessions.revoke(id, of: principal.user.id)
        return done("Signed out there.")
    }
}
