import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// `/not-me` (contract §12): the page a "new way to sign in" notice links to. Opening it changes
/// nothing (mail scanners open every link); one confirming POST takes the new credential away, ends
/// every session and API key of the account and mails its owner. The link's token works once, for
/// seven days, and only its hash is stored.
struct NotMeRoutes: Sendable {
    let kernel: Kernel
    let renderer: PageRenderer
    let login: LoginRoutes

    static let mailTemplate = "kernel.credentials_removed"

    static func registerMail(on mailer: Mailer) throws {
        try mailer.register(
            mailTemplate,
            MailTemplate(
                subject: "[[mail.credentials_removed.subject]]",
                text: """
                    [[mail.credentials_removed.body]]
                    {{password}}
                    """,
                html: """
                    <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
                    <p>[[mail.credentials_removed.body]]</p>
                    <p>{{password}}</p>
                    </body></html>
                    """))
    }

    func add(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get("not-me") { request, context in try await routes.login.guarded(request, context) { try await routes.show(request) } }
        router.post("not-me") { request, context in try await routes.login.posted(request, context) { form in try await routes.confirm(form) } }
    }

    static func text(_ value: JSONValue?) -> String? {
        if case .string(let s)? = value { return s }
        return nil
    }

    /// A timestamp of the token's (`2026-11-28T14:50:46Z`) as the page's language writes a moment
    /// (English keeps it as it is).
    func worded(_ timestamp: String) -> String {
        guard let date = ISO8601DateFormatter().date(from: timestamp) else { return timestamp }
        return kernel.messages.mailTime(date)
    }

    func show(_ request: Request) async throws -> Response {
        let token = request.uri.queryParameters.get("token") ?? ""
        guard let pending = try await kernel.tokens.peek(purpose: SignInMethodNotices.notMePurpose, token: token) else {
            return login.message(kernel.messages.text("not_me.gone"), status: .notFound, title: kernel.messages.text("not_me.title"))
        }
        let values: [String: Any] = [
            "method": Self.text(pending.payload["method"]) ?? kernel.messages.text("not_me.a_way_to_sign_in"), "when": Self.text(pending.payload["when"]).map(worded) ?? "", "token": token,
        ]
        return renderer.page(title: kernel.messages.text("not_me.title"), content: renderer.render("not-me", values))
    }

    func confirm(_ form: PageForm) async throws -> Response {
        guard let redeemed = try await kernel.tokens.redeem(purpose: SignInMethodNotices.notMePurpose, token: form["token"] ?? ""),
            let userID = UUID(uuidString: redeemed.subject)
        else { return login.message(kernel.messages.text("not_me.gone"), status: .notFound, title: kernel.messages.text("not_me.title")) }
        var named: [AddedCredential] = []
        if case .array(let items)? = redeemed.payload["remove"] {
            for case .object(let item) in items { if let credential = AddedCredential(payload: item) { named.append(credential) } }
        }
        let credentials = named
        let removals = kernel.users.removals
        let user = try await kernel.users.update(userID) { user in
            for credential in credentials {
                switch credential {
                case .identity(let identity):
                    user.identities.removeAll { $0 == identity }
                    removals.removal(identity.provider)?(&user, identity.subject)
                case .provided(let kind, let reference):
                    removals.removal(kind)?(&user, reference)
                case .session:
                    break  // ended below, with every other session
                }
            }
        }
        // Every session and API key ends, and the credential version moves on: a device approved
        // meanwhile, or any sign-in that checked the old credentials, starts no session.
        try await kernel.sessions.revokeAll(of: userID)
        kernel.logger.notice("a new way to sign in was removed from its notice's link", metadata: ["user.id": "\(userID.lowercased)"])
        await kernel.audit.record("credential_removed", user: userID, reason: "not_me")
        let hasPassword = user.identities.contains { $0.provider == "password" }
        let removed = Self.text(redeemed.payload["method"]) ?? kernel.messages.text("not_me.a_way_to_sign_in")
        if let email = user.email, user.emailVerified {
            // The mail is in its recipient's language (the account's locale, else this request's),
            // and so are the values it is given.
            let language = kernel.messages.available(user.locale ?? Messages.language) ?? "en"
            try await kernel.mailer.send(
                template: Self.mailTemplate, to: email,
                values: [
                    "removed": removed, "when": kernel.messages.mailTime(kernel.clock.now(), language: language),
                    "password": hasPassword ? kernel.messages.text("mail.credentials_removed.password", language: language) : "",
                ], language: language, waitForDelivery: false)
        }
        let sentence = kernel.messages.text(hasPassword ? "not_me.done.removed_password" : "not_me.done.removed", ["removed": removed])
        return login.message(sentence, status: .ok, title: kernel.messages.text("not_me.done.title"))
    }
}
