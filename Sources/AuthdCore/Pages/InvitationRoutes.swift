import AuthKernel
import AuthStorage
import Foundation
import Hummingbird

/// `/invitation` (contract §17): the page an invitation's link opens. It shows who invited which
/// address. For a new address it mails a code there and makes the account (verified email, the
/// invitation's groups and name) once the code comes back, then signs it in and sends it to
/// `/account`, which offers a passkey and a password: the link alone, which whoever made it has
/// seen, never makes an account. For an address that has an account it asks for that account's own
/// fresh sign-in, then adds the groups. The link is spent once the account is made or the groups added.
struct InvitationRoutes: Sendable {
    let kernel: Kernel
    let renderer: PageRenderer
    let login: LoginRoutes

    static let codePurpose = "invitation.code"
    /// The code that proves the invited address: ten minutes, five tries.
    static let codes = CodePolicy(ttl: 600, resendInterval: 30, maxAttempts: 5, maxFailures: 10, failureWindow: 3600)
    static let mailTemplate = Invitations.codeTemplate
    /// Codes mailed and tried per client network.
    static let sendsPerNetwork = RateLimitRule(limit: 10, window: 3600), triesPerNetwork = RateLimitRule(limit: 30, window: 3600)

    func add(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get("invitation") { request, context in try await routes.login.guarded(request, context) { try await routes.show(request, context) } }
        router.post("invitation/send") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.send(form, request, context) }
        }
        router.post("invitation/verify") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.verify(form, request, context) }
        }
        router.post("invitation/accept") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.accept(form, request) }
        }
    }

    func gone() -> Response {
        login.message(kernel.messages.text("invitation.gone"), status: .notFound, title: kernel.messages.text("invitation.gone_title"))
    }

    /// The invitation page in one of its states, in the pre-sign-in state `pre` (its CSRF token).
    func page(_ invitation: Invitations.Invitation, token: String, state: String, pre: PreSignIn, error: String? = nil, status: HTTPResponse.Status = .ok)
        throws -> Response
    {
        var values: [String: Any] = [
            "inviter": invitation.invitedBy, "email": invitation.email, "product": renderer.productName, "csrf": pre.csrf, "token": token,
            "groups": invitation.groups.joined(separator: ", "), "lifetime": kernel.messages.lifetime(Self.codes.ttl), state: true,
        ]
        var pre = pre
        if state == "existing" {
            let back = Self.path(token)
            values["signin"] = "/login?return_to=" + (back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            // The account's own sign-in, even in a browser signed in already (stale, or someone else):
            // /login asks for one rather than sending it straight back here.
            (pre.returnTo, pre.signInAfter, pre.freshFor) = (back, Int(kernel.clock.now().timeIntervalSince1970), nil)
        }
        return renderer.page(
            title: kernel.messages.text("invitation.title"), content: renderer.render("invitation", values), error: error, status: status, csrf: pre.csrf,
            cookies: [try pre.cookie(box: login.box)])
    }

    static func path(_ token: String) -> String { InvitationSender.path + "?token=" + token }

    /// Whether the browser is signed in, freshly and with more than a PIN, to the account of `email`.
    func signedInAs(_ email: String, _ request: Request) async throws -> Principal? {
        guard let principal = try await login.browserPrincipal(request), principal.user.email == email, principal.user.emailVerified,
            (try? kernel.sessions.requireFresh(principal)) != nil
        else { return nil }
        return principal
    }

    func show(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let token = request.uri.queryParameters.get("token").map { String($0) } ?? ""
        guard token.utf8.count <= 256, let invitation = try await kernel.invitations.opened(token: token) else { return gone() }
        let pre = PreSignIn.unsealed(request, box: login.box, now: kernel.clock.now()) ?? PreSignIn.new(returnTo: "/account", now: kernel.clock.now())
        if try await kernel.users.user(email: invitation.email) != nil {
            return try page(invitation, token: token, state: try await signedInAs(invitation.email, request) == nil ? "existing" : "accept", pre: pre)
        }
        return try page(invitation, token: token, state: invitation.vouched ? "vouched" : "send", pre: pre)
    }

    /// The form's pre-sign-in state and the invitation its token names, or the answer instead.
    func checked(_ form: PageForm, _ request: Request) async throws -> (PreSignIn, Invitations.Invitation, String)? {
        let (pre, _) = login.preSignIn(form, request)
        guard let pre, let token = form["token"], token.utf8.count <= 256, let invitation = try await kernel.invitations.opened(token: token) else { return nil }
        return (pre, invitation, token)
    }

    func send(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let (pre, invitation, token) = try await checked(form, request) else { return gone() }
        guard try await kernel.users.user(email: invitation.email) == nil else { return try page(invitation, token: token, state: "existing", pre: pre) }
        do {
            try await kernel.rateLimiter.consume(Self.sendsPerNetwork, key: "invitation.send:\(context.clientKey)")
            let code = try await kernel.codes.issue(purpose: Self.codePurpose, key: invitation.email, policy: Self.codes)
            try await kernel.mailer.send(
                template: Self.mailTemplate, to: invitation.email, code: code, lifetime: Self.codes.ttl)
        } catch let error as AuthError {
            return try page(invitation, token: token, state: "verify", pre: pre, error: kernel.messages.sentence(error), status: error.status)
        }
        return try page(invitation, token: token, state: "verify", pre: pre)
    }

    func verify(_ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard let (pre, invitation, token) = try await checked(form, request) else { return gone() }
        do {
            try await kernel.rateLimiter.consume(Self.triesPerNetwork, key: "invitation.verify:\(context.clientKey)")
            _ = try await kernel.codes.verify(purpose: Self.codePurpose, key: invitation.email, code: form["code"] ?? "", policy: Self.codes)
        } catch let error as AuthError {
            return try page(invitation, token: token, state: "verify", pre: pre, error: kernel.messages.sentence(error), status: error.status)
        }
        return try await make(invitation, token: token, pre: pre)
    }

    /// A vouched invitation's account, or the groups added to the signed-in account the address holds.
    func accept(_ form: PageForm, _ request: Request) async throws -> Response {
        guard let (pre, invitation, token) = try await checked(form, request) else { return gone() }
        if try await kernel.users.user(email: invitation.email) != nil {
            guard let principal = try await signedInAs(invitation.email, request) else { return try page(invitation, token: token, state: "existing", pre: pre) }
            guard try await kernel.invitations.redeem(token: token) != nil else { return gone() }
            _ = try await kernel.users.update(principal.user.id) { user in
                user.groups = Array(Set(user.groups + invitation.groups)).sorted()
                if user.displayName == nil { user.displayName = invitation.displayName }
            }
            try await kernel.invitations.end(email: invitation.email)
            await kernel.audit.record("admin", user: principal.user.id, account: invitation.invitedBy, reason: "invitation accepted by its account")
            return PageGate.redirect(to: "/account")
        }
        guard invitation.vouched else { return try page(invitation, token: token, state: "send", pre: pre) }
        return try await make(invitation, token: token, pre: pre)
    }

    /// Spends the link, makes the account (which takes the invitation in the same write) and signs it
    /// in: only a new account, however the address was proven; a link never enters one that exists.
    func make(_ invitation: Invitations.Invitation, token: String, pre: PreSignIn) async throws -> Response {
        if try await kernel.users.user(email: invitation.email) != nil { return try page(invitation, token: token, state: "existing", pre: pre) }
        guard try await kernel.invitations.redeem(token: token) != nil else { return gone() }
        let user = try await kernel.users.signIn(
            .init(identity: Identity(provider: "email", subject: invitation.email), email: invitation.email, emailVerified: true), linkingTo: nil)
        await kernel.audit.record("admin", user: user.id, account: invitation.invitedBy, reason: invitation.vouched ? "vouched invitation accepted" : "invitation accepted")
        var pre = pre
        pre.returnTo = "/account"
        return try await login.signIn(user, amr: ["invitation"], device: try DeviceInfo(name: "Browser", platform: nil), pre: pre)
    }
}
