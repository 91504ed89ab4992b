import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// `/login` and its forms, `/logout` (contract §13): a browser signs in with any provider that has
/// page steps, then the second factors the sign-in policies demand, and gets a session of kind
/// `browser` in a `__Host-` cookie; nothing from before the sign-in (the pre-sign-in cookie, its
/// CSRF token) survives it.
struct LoginRoutes: Sendable {
    let kernel: Kernel
    let gate: PageGate
    let renderer: PageRenderer
    let providers: [any PageSignIn]
    /// Seals the pre-sign-in cookie.
    let box: SecretBox
    /// Derives the signed-in pages' CSRF tokens.
    let csrfKey: [UInt8]
    /// The OpenID clients, for which of them allow a PIN.
    let clients: OpenIDClients

    /// Offered only to the sign-ins of OpenID clients registered `--allow-pin` (contract §13).
    static let pinProvider = "pin"
    /// The address form's hidden field saying a post came from `/login`'s first screen.
    static let fromLoginField = "from"

    /// What the sign-in's authorize request (when it returns to one) allows: user name + PIN for a
    /// client registered `--allow-pin`, and its redirect URI as a form target; and which client it is.
    func authorizeRequest(returnTo: String) async throws -> (allowPin: Bool, formTarget: String?, client: String?) {
        guard let c = URLComponents(string: returnTo), c.path == "/oauth/authorize" else { return (false, nil, nil) }
        let query = PageForm(urlencoded: c.percentEncodedQuery ?? "")
        guard let id = query["client_id"], let client = try await clients.find(id) else { return (false, nil, nil) }
        let target = query["redirect_uri"].flatMap { client.allows(redirect: $0) ? PageGate.formSource($0) : nil }
        return (client.allowPin, target, client.id)
    }

    /// The providers this sign-in shows.
    func offered(_ pre: PreSignIn) -> [any PageSignIn] {
        providers.filter { type(of: $0).id != Self.pinProvider || pre.allowPin }
    }

    /// New sign-in pages per client network (each seals a cookie; nothing is stored).
    static let pagesPerNetwork = RateLimitRule(limit: 120, window: 600)

    func add(to router: Router<AuthRequestContext>) {
        let routes = self
        Self.asset(router, "authd.css", type: "text/css; charset=utf-8", PageRenderer.stylesheet)
        Self.asset(router, "passkey.js", type: "text/javascript; charset=utf-8", PageRenderer.passkeyScript)
        Self.asset(router, "poll.js", type: "text/javascript; charset=utf-8", PageRenderer.pollScript)
        router.get("login") { request, context in try await routes.guarded(request, context) { try await routes.show(request, context) } }
        router.post("login/factor") { request, context in try await routes.posted(request, context) { form in try await routes.factor(form, request, context) } }
        router.post("login/restart") { request, context in
            try await routes.posted(request, context) { form in try await routes.restart(form, request, context) }
        }
        router.post("login/:provider/:action") { request, context in
            try await routes.posted(request, context) { form in try await routes.providerPost(form, request, context) }
        }
        // A provider's links and an identity provider's way back (`/login/oidc/google/callback`).
        for path in ["login/:provider/:action", "login/:provider/:action/:step"] {
            router.get(RouterPath(path)) { request, context in try await routes.guarded(request, context) { try await routes.providerGet(request, context) } }
        }
        router.post("logout") { request, context in try await routes.posted(request, context) { form in try await routes.logout(form, request) } }
    }

    /// Serves one of the pages' files at `/assets/NAME`, cached for an hour.
    static func asset(_ router: Router<AuthRequestContext>, _ name: String, type: String, _ bytes: [UInt8]) {
        router.get("assets/\(name)") { _, _ -> Response in
            var response = Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            response.headers[.cacheControl] = "public, max-age=3600"
            response.headers[.xContentTypeOptions] = "nosniff"
            return response
        }
    }

    // MARK: - Gates

    /// The HTTPS-or-loopback rule and the issuer's host, before anything else.
    func guarded(_ request: Request, _ context: AuthRequestContext, _ body: () async throws -> Response) async throws -> Response {
        guard gate.isAllowed(context) else { return PageGate.refusal() }
        if let redirect = gate.redirectToIssuerHost(request) { return redirect }
        return try await body()
    }

    /// A POST: the gates, the issuer's `Origin`, a bounded urlencoded body.
    func posted(_ request: Request, _ context: AuthRequestContext, _ body: (PageForm) async throws -> Response) async throws -> Response {
        try await guarded(request, context) {
            guard gate.isSameOrigin(request) else {
                return message(kernel.messages.text("page.foreign_form"), status: .forbidden)
            }
            let buffer = try await request.body.collect(upTo: PageForm.maxBytes)
            return try await body(PageForm(urlencoded: String(buffer: buffer)))
        }
    }

    /// A page that says one thing; its title is "Sign in" unless `title` says otherwise.
    func message(_ text: String, status: HTTPResponse.Status, title: String? = nil) -> Response {
        renderer.page(title: title ?? kernel.messages.text("login.title"), content: renderer.render("message", ["message": text]), status: status)
    }

    // MARK: - Pages

    func show(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let returnTo = PageGate.returnTo(request.uri.queryParameters.get("return_to"))
        let now = kernel.clock.now()
        let pre = PreSignIn.unsealed(request, box: box, now: now)
        let (allowPin, formTarget, client) = try await authorizeRequest(returnTo: returnTo)
        // An authorize request that asked for a newer sign-in (sealed in the cookie by that request)
        // is shown the sign-in, not sent straight back, which would send the two to each other for ever.
        let signInAfter = pre?.returnTo == returnTo && pre?.freshFor == nil ? pre?.signInAfter : nil
        if signInAfter == nil, try await browserPrincipal(request, acceptingPIN: allowPin) != nil {
            return PageGate.redirect(to: returnTo, status: .found)
        }
        if pre == nil {
            try await kernel.rateLimiter.consume(Self.pagesPerNetwork, key: "pages.new:\(ClientNetwork.network(for: context.clientIP))")
        }
        var state = pre ?? PreSignIn.new(returnTo: returnTo, now: now)
        (state.returnTo, state.allowPin, state.formTarget, state.signInAfter, state.freshFor) = (returnTo, allowPin, formTarget, signInAfter, nil)
        (state.provider, state.state, state.challenge, state.factors, state.client) = (nil, [:], nil, [], client)
        // The cookie is sealed again only when what it holds changed.
        return try await loginPage(state, resealing: state != pre)
    }

    /// The first screen (contract §18): "Sign in to APP" when an app sent the person; the address
    /// asked once, in one form whose buttons are the providers' ways in from it
    /// (``PageSignIn/emailButtons()``); then each provider's own first step (`replacing`: one
    /// provider's step in place of its first, the same step answered again with what was typed).
    func loginPage(
        _ pre: PreSignIn, error: String? = nil, status: HTTPResponse.Status = .ok, resealing: Bool = true, notice: String? = nil,
        replacing: (id: String, step: PageStep)? = nil, focusEmail: Bool = false
    ) async throws -> Response {
        var buttons: [LoginButton] = [], steps: [(label: String, step: PageStep, action: String)] = [], later: [(label: String, step: PageStep, action: String)] = []
        for provider in offered(pre) {
            let id = type(of: provider).id
            let own = provider.emailButtons().map { LoginButton(label: $0.label, action: "/login/\(id)/\($0.action)", takesPassword: $0.takesPassword) }
            buttons += own
            let first = provider.loginStep()
            let step = replacing.flatMap { $0.id == id && $0.step.template == first?.template ? $0.step : nil } ?? first
            guard let step else { continue }
            // A provider with buttons on the address form shows the rest of its first step (sign-up,
            // resets) after the other ways in.
            let label = methodName(of: provider)
            if own.isEmpty { steps.append((label, step, "/login/\(id)/")) } else { later.append((label, step, "/login/\(id)/")) }
        }
        // Enter in the form presses its first button: the one that reads the password field.
        buttons = buttons.filter(\.takesPassword) + buttons.filter { !$0.takesPassword }
        var app: OpenIDClient?
        if let id = pre.client { app = try await clients.find(id) }
        let form = LoginForm(email: pre.email ?? "", buttons: buttons, appLogo: app?.logoURI, focusEmail: focusEmail)
        return renderer.page(
            title: app.map { kernel.messages.text("login.title_app", ["app": $0.name]) } ?? kernel.messages.text("login.title"), content: renderer.loginContent(form, steps + later, csrf: pre.csrf), error: error,
            status: status, csrf: pre.csrf, cookies: resealing ? [try pre.cookie(box: box)] : [], formTarget: pre.formTarget,
            imageSource: app?.logoURI.flatMap(PageGate.imageSource), notice: notice)
    }

    /// How the page names a provider's way in (its section's label): its catalog's
    /// `PROVIDER.method_name` in the page's language, else its ``AuthProvider/methodName``.
    func methodName(of provider: any PageSignIn) -> String {
        let key = type(of: provider).id + ".method_name"
        let text = kernel.messages.text(key)
        return text == key ? type(of: provider).methodName : text
    }

    /// The pre-sign-in state a POST must carry, with its CSRF token; nil answers for it.
    func preSignIn(_ form: PageForm, _ request: Request) -> (PreSignIn?, Response?) {
        guard let pre = PreSignIn.unsealed(request, box: box, now: kernel.clock.now()) else {
            return (nil, message(kernel.messages.text("login.error.expired"), status: .badRequest))
        }
        guard let csrf = form["csrf"], ConstantTime.equals(Array(csrf.utf8), Array(pre.csrf.utf8)) else {
            return (nil, message(kernel.messages.text("login.error.out_of_date"), status: .forbidden))
        }
        return (pre, nil)
    }

    func providerPost(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let (found, refusal) = preSignIn(form, request)
        guard var pre = found else { return refusal! }
        // What was typed stays for the pages that follow (an error, "Use another way"); never a password.
        if let typed = form["email"]?.trimmingCharacters(in: .whitespaces), !typed.isEmpty, typed.utf8.count <= 320 { pre.email = typed }
        let id = context.parameters.get("provider") ?? "", action = context.parameters.get("action") ?? ""
        guard let provider = offered(pre).first(where: { type(of: $0).id == id }) else {
            return message(kernel.messages.text("login.error.no_such_way"), status: .notFound)
        }
        var state = pre.provider == id ? pre.state : [:]
        let outcome: PageOutcome
        do {
            outcome = try await provider.pagePost(action: action, form: form, state: &state, context: context)
        } catch let error as AuthError {
            (pre.provider, pre.state) = (nil, [:])
            return try await loginPage(pre, error: kernel.messages.sentence(error), status: error.status)
        }
        // The provider's first screen again, or an error answering the address form: shown as
        // `/login` itself, the error above, what was typed kept, every way in still there.
        if case .step(let step) = outcome,
            step.template == provider.loginStep()?.template || (step.error != nil && form[Self.fromLoginField] == "login"
                && provider.emailButtons().contains { $0.action == action })
        {
            if case .text(let typed)? = step.values["email"], !typed.isEmpty { pre.email = typed }
            (pre.provider, pre.state) = (nil, [:])
            return try await loginPage(pre, error: step.error, status: step.status, notice: step.notice, replacing: (id, step))
        }
        return try await answer(outcome, of: provider, state: state, pre: pre, browserName: context.browser)
    }

    /// A GET of a provider's link or its identity provider's way back: the pre-sign-in state
    /// (begun here when the browser has none), `return_to` when the link names one.
    func providerGet(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let now = kernel.clock.now()
        let found = PreSignIn.unsealed(request, box: box, now: now)
        var pre: PreSignIn
        if let found {
            pre = found
        } else {
            try await kernel.rateLimiter.consume(Self.pagesPerNetwork, key: "pages.new:\(ClientNetwork.network(for: context.clientIP))")
            pre = PreSignIn.new(returnTo: "/account", now: now)
        }
        let id = context.parameters.get("provider") ?? ""
        guard let provider = offered(pre).first(where: { type(of: $0).id == id }) else {
            return message(kernel.messages.text("login.error.no_such_way"), status: .notFound)
        }
        // A link that starts something (`/login/ID/ACTION`) may say where the sign-in goes, as
        // `/login` does, and starts it afresh; a way back (`/login/ID/ACTION/STEP`) never changes it.
        if context.parameters.get("step") == nil, let asked = request.uri.queryParameters.get("return_to") {
            pre.returnTo = PageGate.returnTo(asked)
            (pre.allowPin, pre.formTarget, pre.client) = try await authorizeRequest(returnTo: pre.returnTo)
            (pre.challenge, pre.factors) = (nil, [])
        }
        let path = ([context.parameters.get("action")] + [context.parameters.get("step")]).compactMap { $0 }.joined(separator: "/")
        var state = pre.provider == id ? pre.state : [:]
        let query = PageForm(urlencoded: request.uri.query ?? "")
        var browser = try await browserPrincipal(request)
        // A link from a signed-in page (`/account`) carries that page's CSRF token: one that does not
        // is another site's, and acts for nobody.
        if query["csrf"] != nil {
            guard let signedIn = browser, carriesCSRF(query, of: signedIn) else {
                return message(kernel.messages.text("login.error.link_out_of_date"), status: .forbidden, title: kernel.messages.text("account.title"))
            }
        } else if context.parameters.get("step") == nil {
            browser = nil
        }
        let outcome: PageOutcome
        do {
            outcome = try await provider.pageGet(path: path, query: query, state: &state, browser: browser, context: context)
            return try await answer(outcome, of: provider, state: state, pre: pre, arrivedFromElsewhere: true, browserName: context.browser)
        } catch let error as AuthError {
            if pre.provider == id { (pre.provider, pre.state) = (nil, [:]) }
            guard query["csrf"] != nil || (browser != nil && context.parameters.get("step") != nil) else {
                return (try? await loginPage(pre, error: kernel.messages.sentence(error), status: error.status))
                    ?? message(kernel.messages.sentence(error), status: error.status)
            }
            // Signed in already (linking a way in): the sign-in page is not where they were.
            let content = renderer.render("message", ["message": kernel.messages.sentence(error), "link": "/account", "link_text": kernel.messages.text("page.back_to_account")])
            return renderer.page(title: kernel.messages.text("account.title"), content: content, status: error.status, cookies: (try? pre.cookie(box: box)).map { [$0] } ?? [])
        }
    }

    /// What a provider's outcome shows: its next step, the sign-in, or a redirect. `arrivedFromElsewhere`:
    /// the request is a GET another site may have sent (an identity provider's way back).
    /// `browserName`: the browser and system the User-Agent names, the session's platform when the provider gave none.
    func answer(
        _ outcome: PageOutcome, of provider: any PageSignIn, state: [String: String], pre: PreSignIn, arrivedFromElsewhere: Bool = false,
        browserName: String? = nil
    ) async throws -> Response {
        var pre = pre
        let id = type(of: provider).id
        switch outcome {
        case .step(let step):
            (pre.provider, pre.state) = (id, state)
            return renderer.page(
                title: kernel.messages.text("login.title"), content: renderer.render(step, csrf: pre.csrf, action: "/login/\(id)/"), error: step.error, status: step.status,
                csrf: pre.csrf, cookies: [try pre.cookie(box: box)], formTarget: pre.formTarget, notice: step.notice)
        case .signedIn(let user, let amr, let device, let multiFactor, let vouchedAt):
            return try await provider.whilePageSignsIn(state: state) {
                // The browser's session is named by its browser and system ("Firefox on Windows") on /account.
                let named = device.platform == nil ? ((try? DeviceInfo(name: device.name, platform: browserName)) ?? device) : device
                return try await signIn(user, amr: amr, device: named, multiFactor: multiFactor, vouchedAt: vouchedAt, pre: pre, continuing: arrivedFromElsewhere)
            }
        case .redirect(let location):
            (pre.provider, pre.state) = (id, state)
            // The time spent elsewhere (an identity provider's pages) counts from now.
            pre.expiresAt = max(pre.expiresAt, Int(kernel.clock.now().timeIntervalSince1970) + PreSignIn.lifetime)
            var response = PageGate.redirect(to: location, status: .found)
            response.setCookie(try pre.cookie(box: box))
            return response
        }
    }

    /// After the first factor: the policies, then a second factor or the browser's session.
    func signIn(
        _ user: UserRecord, amr: [String], device: DeviceInfo, multiFactor: Bool = false, vouchedAt: Date? = nil, pre: PreSignIn,
        continuing: Bool = false
    ) async throws -> Response {
        var pre = pre
        let result: SignInResponse
        do {
            result = try await kernel.sessions.signIn(user, amr: amr, device: device, multiFactor: multiFactor, kind: .browser, authTime: vouchedAt)
        } catch let error as AuthError {
            return try await loginPage(pre, error: kernel.messages.sentence(error), status: error.status)
        }
        switch result {
        case .session(let session):
            return try signedIn(session, pre: pre, continuing: continuing)
        case .secondFactorRequired(let required):
            (pre.challenge, pre.factors, pre.provider, pre.state) = (required.challenge, required.factors, nil, [:])
            return try await factorPage(pre)
        }
    }

    /// The new session's cookie; the pre-sign-in cookie ends; on to where the person was going.
    /// `continuing`: the sign-in came back from an identity provider, whose page's form may have
    /// started this navigation; browsers hold the whole redirect chain of a form to that page's
    /// `form-action`, so a chain on to an app of ours (an authorize request) would be cut. A page
    /// of our own that refreshes to it ends that chain.
    func signedIn(_ session: SessionResponse, pre: PreSignIn, continuing: Bool = false) throws -> Response {
        let returnTo = pre.returnTo
        var response: Response
        if continuing, URLComponents(string: returnTo)?.path == "/oauth/authorize" {
            response = renderer.page(
                title: kernel.messages.text("login.signed_in.title"), content: renderer.render("message", ["message": kernel.messages.text("login.signed_in.message"), "link": returnTo, "link_text": kernel.messages.text("page.continue")]))
            response.headers[HTTPField.Name("Refresh")!] = "0; url=\(returnTo)"
        } else {
            response = PageGate.redirect(to: returnTo)
        }
        response.setCookie(BrowserCookie.cookie(session.refreshToken, maxAge: kernel.config.tokens.refreshTTL))
        // A sign-in an authorize request asked for (prompt=login, max_age) leaves its mark for that
        // request alone, sealed in a new pre-sign-in state: nothing else of the old one survives.
        if let after = pre.signInAfter, let c = URLComponents(string: returnTo), c.path == "/oauth/authorize" {
            var mark = PreSignIn.new(returnTo: returnTo, now: kernel.clock.now())
            (mark.signInAfter, mark.freshFor) = (after, PreSignIn.freshness(PageForm(urlencoded: c.percentEncodedQuery ?? "")))
            response.setCookie(try mark.cookie(box: box))
        } else {
            response.setCookie(PreSignIn.cookie("", maxAge: 0))
        }
        return response
    }

    /// Second factors a page can ask, with the catalog key of their field's label. A passkey is
    /// asked by the pages' script (its options in the page, its answer in the `credential` field).
    static let pageFactors: [String: String] = [
        "totp": "factor.label.totp", "recovery_code": "factor.label.recovery_code", "email_code": "factor.label.email_code", "passkey": "",
    ]

    func factorPage(_ pre: PreSignIn, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        var factors: [[String: Any]] = []
        var passkeyOptions: String?
        for name in pre.factors {
            guard let factor = kernel.signInHooks.factor(named: name), let label = Self.pageFactors[name] else { continue }
            if name == "passkey" {
                // Fresh options (a new WebAuthn challenge for this sign-in challenge) each time the page is shown.
                guard let token = pre.challenge, let (challenge, user) = try? await kernel.sessions.pendingChallenge(token),
                    let fields = try? await factor.challengeFields(challenge, for: user), let options = fields["passkey_options"]
                else { continue }
                var w = JSONWriter(capacity: 512)
                w.value(options)
                passkeyOptions = String(decoding: w.bytes, as: UTF8.self)
                continue
            }
            factors.append(["field": factor.answerField, "label": kernel.messages.text(label), "csrf": pre.csrf, "mailed": name == "email_code"])
        }
        guard !factors.isEmpty || passkeyOptions != nil else {
            return message(kernel.messages.text("factor.error.app_only"), status: .forbidden)
        }
        var values: [String: Any] = ["factors": factors, "csrf": pre.csrf]
        if let passkeyOptions { values["passkey_options"] = passkeyOptions }
        return renderer.page(
            title: kernel.messages.text("factor.title"), content: renderer.render("factor", values), error: error, status: status, csrf: pre.csrf,
            cookies: [try pre.cookie(box: box)], formTarget: pre.formTarget)
    }

    func factor(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let (found, refusal) = preSignIn(form, request)
        guard let pre = found else { return refusal! }
        guard let token = pre.challenge else { return try await loginPage(pre) }
        do {
            let (challenge, user) = try await kernel.sessions.pendingChallenge(token)
            let offered = challenge.factors.compactMap { kernel.signInHooks.factor(named: $0) }.filter { Self.pageFactors[$0.name] != nil }
            let answered = offered.compactMap { factor in form[factor.answerField].flatMap { $0.isEmpty ? nil : (factor, $0) } }
            guard answered.count == 1, let (factor, text) = answered.first else { return try await factorPage(pre, error: kernel.messages.text("factor.error.answer_one"), status: .badRequest) }
            // A passkey's answer is WebAuthn's JSON, as the API takes it; the others are text.
            var answer = JSONValue.string(text)
            if factor.answerField == "credential" {
                guard text.utf8.count <= 16_384, let json = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
                    return try await factorPage(pre, error: kernel.messages.text("factor.error.no_passkey"), status: .badRequest)
                }
                answer = json
            }
            try await factor.checkReady(answer, for: user, challenge: challenge)
            let reservation = try await kernel.sessions.reserveAnswer(challenge, network: ClientNetwork.network(for: context.clientIP))
            guard try await factor.verify(answer, for: user, challenge: challenge) else {
                await kernel.audit.record("second_factor_failed", provider: factor.name, user: user.id)
                let left = reservation.remaining
                return try await factorPage(pre, error: kernel.messages.plural("factor.error.wrong", count: left), status: .unauthorized)
            }
            try await kernel.sessions.releaseAnswer(challenge, reservation)
            return try signedIn(try await kernel.sessions.completeChallenge(challenge, factor: factor.name, kind: .browser), pre: pre)
        } catch let error as AuthError {
            var fresh = pre
            (fresh.challenge, fresh.factors) = (nil, [])
            return try await loginPage(fresh, error: kernel.messages.sentence(error), status: error.status)
        }
    }

    func restart(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let (found, refusal) = preSignIn(form, request)
        guard var pre = found else { return refusal! }
        (pre.provider, pre.state, pre.challenge, pre.factors) = (nil, [:], nil, [])
        // "Use another address": the typed address goes too, and the page asks for one.
        let forget = form["forget"] == "email"
        if forget { pre.email = nil }
        return try await loginPage(pre, focusEmail: forget)
    }

    func logout(_ form: PageForm, _ request: Request) async throws -> Response {
        guard let principal = try await browserPrincipal(request, acceptingPIN: true) else {
            return PageGate.redirect(to: "/login")
        }
        guard carriesCSRF(form, of: principal) else {
            return message(kernel.messages.text("page.form_out_of_date_reopen"), status: .forbidden)
        }
        try await kernel.sessions.revoke(principal.session.id, of: principal.user.id)
        var response = PageGate.redirect(to: "/login")
        response.setCookie(BrowserCookie.cookie("", maxAge: 0))
        return response
    }

    /// The browser's sign-in, from its `__Host-authd` cookie; nil when it has none or it has ended.
    /// A sign-in with a PIN alone, made for a kiosk app registered `--allow-pin`, counts only where
    /// `acceptingPIN` says: that app's authorize requests and signing out. Everywhere else (other
    /// apps, `/account`, `/device`, the console) the browser is not signed in (contract §17).
    func browserPrincipal(_ request: Request, acceptingPIN: Bool = false) async throws -> Principal? {
        guard let cookie = request.cookies[BrowserCookie.name]?.value, let principal = try await kernel.sessions.browserPrincipal(cookie: cookie)
        else { return nil }
        guard acceptingPIN || !Self.isPINOnly(principal) else { return nil }
        RequestLanguage.current?.fallBack(to: principal.user.locale)
        return principal
    }

    /// Whether the sign-in used a PIN and nothing else.
    static func isPINOnly(_ principal: Principal) -> Bool {
        !principal.session.amr.isEmpty && principal.session.amr.allSatisfy { $0 == pinProvider }
    }

    /// Whether a signed-in page's form carries that sign-in's CSRF token (compared in constant time).
    func carriesCSRF(_ form: PageForm, of principal: Principal) -> Bool {
        guard let sent = form["csrf"] else { return false }
        return ConstantTime.equals(Array(sent.utf8), Array(Self.csrf(principal.session.id, key: csrfKey).utf8))
    }

    /// The CSRF token of a signed-in browser's forms: derived from its session, so it changes with every sign-in.
    static func csrf(_ sessionID: UUID, key: [UInt8]) -> String {
        Base64URL.encode(SHA256.hmac(key: key, message: Array("csrf\u{0}\(sessionID.lowercased)".utf8)))
    }

}
