import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird

/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0, contract §13). An `id_token_hint`
/// this issuer signed (expired or not) whose `sid` is this browser's session ends that session and
/// the hint's client's tokens from it at once (consent stays), then goes back to a
/// `post_logout_redirect_uri` registered for that client. Anything else asks the person first, so
/// a link on another site cannot sign anyone out. An unregistered return address is never followed.
extension OpenIDRoutes {
    /// What the confirmation form carries, sealed.
    struct PendingLogout: Codable, Sendable {
        var clientID: String?
        var redirectURI: String?
        var state: String?
        var expiresAt: Int
    }

    func addLogout(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get("oauth/logout") { request, context in
            try await routes.login.guarded(request, context) {
                try await routes.logout(PageForm(urlencoded: request.uri.query ?? ""), request)
            }
        }
        // A relying party's form posts from its own origin, and a SameSite=Lax cookie does not come
        // with a cross-site POST: the same request again as a GET, where it does.
        router.post("oauth/logout") { request, context in
            try await routes.login.guarded(request, context) {
                let body = try await request.body.collect(upTo: PageForm.maxBytes)
                let form = PageForm(urlencoded: String(buffer: body))
                var c = URLComponents()
                c.queryItems = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "logout_hint", "ui_locales"].compactMap { name in
                    form[name].map { URLQueryItem(name: name, value: $0) }
                }
                return PageGate.redirect(to: "/oauth/logout" + (c.percentEncodedQuery.map { "?" + $0 } ?? ""), status: .seeOther)
            }
        }
        router.post("oauth/logout/confirm") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.confirmLogout(form, request) }
        }
    }

    func logout(_ query: PageForm, _ request: Request) async throws -> Response {
        func value(_ name: String) -> String? { query[name].flatMap { $0.isEmpty || $0.utf8.count > 8192 ? nil : $0 } }
        var hint: [String: JSONValue]?
        if let token = value("id_token_hint") {
            guard let claims = tokens.verifiedIDToken(token) else {
                return errorPage(kernel.messages.text("logout.error.unreadable"))
            }
            hint = claims
        }
        var clientID = value("client_id")
        if case .string(let aud)? = hint?["aud"] {
            guard clientID == nil || clientID == aud else { return errorPage(kernel.messages.text("logout.error.two_apps")) }
            clientID = aud
        }
        var client: OpenIDClient?
        if let clientID { client = try await clients.find(clientID) }
        var redirectURI: String?
        if let asked = value("post_logout_redirect_uri") {
            guard let client, client.postLogoutRedirectURIs.contains(asked) else {
                return errorPage(kernel.messages.text("logout.error.unknown_redirect"))
            }
            redirectURI = asked
        }
        let state = value("state")
        guard let principal = try await login.browserPrincipal(request, acceptingPIN: true) else { return signedOut(redirectURI, state: state, clearing: false) }
        if case .string(let sid)? = hint?["sid"], sid == principal.session.id.lowercased, let client {
            try await endBrowserSession(principal, client: client.id)
            return signedOut(redirectURI, state: state, clearing: true)
        }
        let pending = PendingLogout(
            clientID: client?.id, redirectURI: redirectURI, state: state, expiresAt: Int(kernel.clock.now().timeIntervalSince1970) + 600)
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        var values: [String: Any] = [
            "who": principal.user.email ?? principal.user.username ?? principal.user.id.lowercased, "csrf": csrf,
            "request": box.seal(String(decoding: try JSONEncoder().encode(pending), as: UTF8.self)),
        ]
        // Only when there is one: Mustache takes an empty string for a value, and the page would
        // say " asks to sign you out" of nobody.
        if let name = client?.name { values["client"] = name }
        return renderer.page(
            title: kernel.messages.text("logout.title"), content: renderer.render("logout", values), signedIn: true, csrf: csrf, formTarget: redirectURI.flatMap(PageGate.formSource))
    }

    func confirmLogout(_ form: PageForm, _ request: Request) async throws -> Response {
        let principal = try await login.browserPrincipal(request, acceptingPIN: true)
        guard let sealed = form["request"], let json = box.open(sealed), let pending = try? JSONDecoder().decode(PendingLogout.self, from: Data(json.utf8)),
            pending.expiresAt > Int(kernel.clock.now().timeIntervalSince1970)
        else { return login.message(kernel.messages.text("page.form_out_of_date_app"), status: .forbidden) }
        guard let principal else { return signedOut(pending.redirectURI, state: pending.state, clearing: false) }
        guard login.carriesCSRF(form, of: principal) else {
            return login.message(kernel.messages.text("page.form_out_of_date_app"), status: .forbidden)
        }
        guard form["decision"] == "logout" else { return PageGate.redirect(to: "/account") }
        try await endBrowserSession(principal, client: pending.clientID)
        return signedOut(pending.redirectURI, state: pending.state, clearing: true)
    }

    /// Ends the browser's session and, for `client`, the tokens it issued from that session.
    func endBrowserSession(_ principal: Principal, client: String?) async throws {
        if let client {
            let sid = principal.session.id.lowercased
            for session in try await kernel.sessions.sessions(of: principal.user.id)
            where session.kind == .client && session.clientID == client && session.clientGrant?.split(separator: " ").dropFirst().first.map(String.init) == sid {
                try await kernel.sessions.revoke(session.id, of: principal.user.id)
            }
        }
        try await kernel.sessions.revoke(principal.session.id, of: principal.user.id)
    }

    func signedOut(_ redirectURI: String?, state: String?, clearing: Bool) -> Response {
        var response =
            redirectURI.map { redirect($0, [("state", state)]) }
            ?? login.message(kernel.messages.text("logout.signed_out.message"), status: .ok, title: kernel.messages.text("logout.signed_out.title"))
        if clearing { response.setCookie(BrowserCookie.cookie("", maxAge: 0)) }
        return response
    }
}
