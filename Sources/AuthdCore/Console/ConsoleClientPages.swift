import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird

/// The console's OpenID clients (contract §14): create one (its secret shown once), edit its
/// redirect URIs and claims, rotate its secret, delete it; and the service keys (made with the
/// secret shown once, revoked). The same services as `authd clients` and `authd service-keys`.
extension ConsoleRoutes {
    func addClientPages(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get("admin/clients") { request, context in try await routes.page(request, context) { try await routes.showClients($0) } }
        router.get("admin/clients/:id") { request, context in
            try await routes.page(request, context) { try await routes.showClient($0, id: context.parameters.get("id") ?? "") }
        }
        router.post("admin/clients") { request, context in
            try await routes.change(request, context) { op, form in try await routes.createClient(op, form) }
        }
        router.post("admin/clients/:id/:action") { request, context in
            try await routes.change(request, context) { op, form in
                try await routes.changeClient(op, id: context.parameters.get("id") ?? "", action: context.parameters.get("action") ?? "", form: form)
            }
        }
        router.get("admin/keys") { request, context in try await routes.page(request, context) { try await routes.showKeys($0) } }
        router.post("admin/keys") { request, context in
            try await routes.change(request, context) { op, form in try await routes.createKey(op, form) }
        }
        router.post("admin/keys/:name/revoke") { request, context in
            try await routes.change(request, context) { op, _ in try await routes.revokeKey(op, name: context.parameters.get("name") ?? "") }
        }
    }

    /// Lines of a textarea, trimmed, empty ones dropped.
    /// A comma-separated field's items, trimmed, without empty ones.
    static func list(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func lines(_ text: String?) -> [String] {
        (text ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The catalog key of an app's kind: public or confidential, first-party or not.
    static func kindKey(isPublic: Bool, firstParty: Bool) -> String {
        "console.clients.kind." + (isPublic ? "public" : "confidential") + (firstParty ? "_first_party" : "")
    }

    func showClients(
        _ op: Operator, created: (id: String, secret: String?)? = nil, error: String? = nil, status: HTTPResponse.Status = .ok, draft: ConsoleDraft? = nil
    ) async throws -> Response {
        let clients = try await openIDClients.list().sorted { $0.name.lowercased() < $1.name.lowercased() }
        var values: [String: Any] = [
            "clients": clients.map { ["id": $0.id, "name": $0.name, "kind": kernel.messages.text(Self.kindKey(isPublic: $0.isPublic, firstParty: $0.firstParty)),
                                      "redirects": $0.redirectURIs.joined(separator: " ")] },
            "has_clients": !clients.isEmpty,
        ]
        values["issuer"] = kernel.issuer
        values["discovery"] = kernel.issuer + "/.well-known/openid-configuration"
        if let draft { draft.apply(to: &values) }
        if let created {
            values["created_id"] = created.id
            values["created_secret"] = created.secret ?? ""
        }
        return console(kernel.messages.text("console.clients.title"), "admin-clients", values, op, error: error, status: status)
    }

    func showClient(
        _ op: Operator, id: String, secret: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok, draft: ConsoleDraft? = nil, notice: String? = nil
    ) async throws -> Response {
        guard let client = try await openIDClients.find(id) else {
            return console(kernel.messages.text("console.clients.title"), "message", ["message": kernel.messages.text("console.client.not_found")], op, status: .notFound)
        }
        var values: [String: Any] = [
            "id": client.id, "name": client.name, "public": client.isPublic, "redirect_uris": client.redirectURIs.joined(separator: "\n"),
            "post_logout_redirect_uris": client.postLogoutRedirectURIs.joined(separator: "\n"), "claims": client.claims.joined(separator: ", "),
            "alg": client.idTokenAlg, "first_party": client.firstParty, "created": when(client.createdAt),
            "allowed_groups": client.allowedGroups.joined(separator: ", "), "pkce_optional": client.pkceOptional, "allow_pin": client.allowPin,
            "unverified_email": client.unverifiedEmail, "kind_first_party": client.firstParty, "logo_uri": client.logoURI ?? "",
            "issuer": kernel.issuer, "discovery": kernel.issuer + "/.well-known/openid-configuration",
        ]
        if let draft { draft.apply(to: &values) }
        let alg = values["id_token_alg"] as? String ?? client.idTokenAlg
        values["algorithms"] = OpenIDClients.algorithms.map { ["name": $0, "selected": $0 == alg] }
        if let notice { values["notice"] = notice }
        // Only right after a rotation: an empty value would still open the section (any string does).
        if let secret { values["secret"] = secret }
        return console(client.name, "admin-client", values, op, error: error, status: status)
    }

    func createClient(_ op: Operator, _ form: PageForm) async throws -> Response {
        var settings = OpenIDClientSettings()
        settings.name = form["name"]
        settings.redirectURIs = Self.lines(form["redirect_uris"])
        settings.isPublic = form["public"] == "on"
        settings.firstParty = form["first_party"] == "on"
        if form["public"] != "on" { settings.pkceOptional = form["pkce_optional"] == "on" }
        do {
            let created = try await openIDClients.create(settings)
            await kernel.audit.record("admin_console", account: op.email, reason: "create client \(created.client.id)")
            return try await showClients(op, created: (created.client.id, created.secret))
        } catch let error as AuthError {
            return try await showClients(
                op, error: kernel.messages.sentence(error), status: error.status, draft: ConsoleDraft.of(form, action: "/admin/clients", user: op.principal.user.id, now: kernel.clock.now()))
        }
    }

    /// Every setting `authd clients update` takes, from the app page's form.
    static func settings(editing form: PageForm, isPublic: Bool) -> OpenIDClientSettings {
        var settings = OpenIDClientSettings()
        settings.name = (form["name"] ?? "").trimmingCharacters(in: .whitespaces)
        settings.redirectURIs = lines(form["redirect_uris"])
        settings.postLogoutRedirectURIs = lines(form["post_logout_redirect_uris"])
        settings.claims = list(form["claims"])
        settings.allowedGroups = list(form["allowed_groups"])
        settings.firstParty = form["first_party"] == "on"
        // A public client always uses PKCE: its form has no such box.
        if !isPublic { settings.pkceOptional = form["pkce_optional"] == "on" }
        settings.allowPin = form["allow_pin"] == "on"
        settings.unverifiedEmail = form["unverified_email"] == "on"
        if let alg = form["id_token_alg"], !alg.isEmpty { settings.idTokenAlg = alg }
        // Empty removes it.
        if let logo = form["logo_uri"] { settings.logoURI = logo.trimmingCharacters(in: .whitespaces) }
        return settings
    }

    func changeClient(_ op: Operator, id: String, action: String, form: PageForm) async throws -> Response {
        do {
            switch action {
            case "edit":
                guard let client = try await openIDClients.find(id) else { break }
                do {
                    guard try await openIDClients.update(id, Self.settings(editing: form, isPublic: client.isPublic)) != nil else { break }
                } catch let error as AuthError {
                    // The form as it was sent, with what to fix.
                    return try await showClient(
                        op, id: id, error: kernel.messages.sentence(error), status: error.status,
                        draft: ConsoleDraft.of(form, action: "/admin/clients/\(id)/edit", user: op.principal.user.id, now: kernel.clock.now()))
                }
                await kernel.audit.record("admin_console", account: op.email, reason: "update client \(id)")
                return redirect(to: "/admin/clients/\(id)", notice: kernel.messages.text("console.client.saved"), for: op)
            case "rotate":
                guard let (_, secret) = try await openIDClients.rotateSecret(id, grace: 0) else { break }
                await kernel.audit.record("admin_console", account: op.email, reason: "rotate client secret \(id)")
                return try await showClient(op, id: id, secret: secret)
            case "delete":
                guard try await openIDClients.delete(id) else { break }
                await kernel.audit.record("admin_console", account: op.email, reason: "delete client \(id)")
                return PageGate.redirect(to: "/admin/clients")
            default:
                break
            }
            return console(kernel.messages.text("console.clients.title"), "message", ["message": kernel.messages.text("console.client.no_such_change")], op, status: .notFound)
        } catch let error as AuthError {
            return try await showClient(op, id: id, error: kernel.messages.sentence(error), status: error.status)
        }
    }

    func showKeys(_ op: Operator, created: (name: String, secret: String)? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let keys = try await serviceKeys.list()
        var values: [String: Any] = [
            "keys": keys.map { ["name": $0.name, "prefix": ServiceKeys.prefix + $0.prefix + "…", "created": when($0.createdAt)] },
            "has_keys": !keys.isEmpty,
        ]
        if let created { (values["created_name"], values["created_secret"]) = (created.name, created.secret) }
        return console(kernel.messages.text("console.keys.title"), "admin-keys", values, op, error: error, status: status)
    }

    func createKey(_ op: Operator, _ form: PageForm) async throws -> Response {
        let name = form["name"] ?? ""
        do {
            let secret = try await serviceKeys.create(name: name)
            await kernel.audit.record("admin_console", account: op.email, reason: "create service key \(name)")
            return try await showKeys(op, created: (name, secret))
        } catch let error as AuthError {
            return try await showKeys(op, error: kernel.messages.sentence(error), status: error.status)
        }
    }

    func revokeKey(_ op: Operator, name: String) async throws -> Response {
        do {
            try await serviceKeys.revoke(name: name)
            await kernel.audit.record("admin_console", account: op.email, reason: "revoke service key \(name)")
            return PageGate.redirect(to: "/admin/keys")
        } catch let error as AuthError {
            return try await showKeys(op, error: kernel.messages.sentence(error), status: error.status)
        }
    }
}
