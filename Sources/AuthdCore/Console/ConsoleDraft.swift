import AuthKernel
import Foundation
import Hummingbird

/// A console form refused for a stale sign-in (older than `auth.fresh_auth`), kept across the new
/// sign-in: the page it was on, where it was posted and its fields, sealed with the pages' key in a
/// short-lived cookie. The page refills the form from it once, for the same operator. Only the
/// fields a console form has are kept (never a CSRF token, a secret or a typed delete
/// confirmation), and only while the sealed cookie stays under ``maxCookieBytes``.
struct ConsoleDraft: Codable, Sendable, Equatable {
    /// The console page the form is on (`/admin/clients/ID`).
    var page: String
    /// Where it was posted (`/admin/clients/ID/edit`).
    var action: String
    var fields: [String: String]
    /// The operator who posted it.
    var user: String
    var expiresAt: Int

    static let cookieName = "__Host-authd-console-draft"
    /// As long as a sign-in may take (``PreSignIn/lifetime``).
    static let lifetime = PreSignIn.lifetime
    static let maxCookieBytes = 3500
    /// Told apart from the other values the pages' key seals.
    static let prefix = "console-draft\u{0}"

    /// The fields the console's forms have that are worth keeping.
    static let kept: [String] = [
        "email", "display_name", "groups", "email_verified", "name", "redirect_uris", "post_logout_redirect_uris", "claims", "allowed_groups",
        "public", "first_party", "pkce_optional", "allow_pin", "unverified_email", "logo_uri", "app_metadata", "id_token_alg",
    ]
    /// The forms' checkboxes, by where the form posts: absent from a post means unticked.
    static func checkboxes(_ action: String) -> [String] {
        if action == "/admin/users/new" { return ["email_verified"] }
        if action == "/admin/clients" { return ["public", "first_party"] }
        if action.hasPrefix("/admin/clients/"), action.hasSuffix("/edit") { return ["first_party", "pkce_optional", "allow_pin", "unverified_email"] }
        return []
    }

    /// The prefix of the template's keys for the form posted to `action`: the forms that make
    /// something new (`new_`, `invite_`); the forms that edit the page's record use its own keys.
    static func keyPrefix(_ action: String) -> String {
        switch action {
        case "/admin/invitations": "invite_"
        case "/admin/users/new", "/admin/clients", "/admin/keys": "new_"
        default: ""
        }
    }

    /// The page a console form posted to `action` is on.
    static func page(of action: String) -> String {
        let parts = action.split(separator: "/").map(String.init)
        switch parts.count {
        case ...2:  // /admin/clients, /admin/keys, /admin/invitations
            return action == "/admin/invitations" ? "/admin/users" : action
        case 3:  // /admin/users/new
            return "/admin/" + parts[1]
        default:  // /admin/users/ID/groups, /admin/clients/ID/edit, /admin/keys/NAME/revoke, /admin/webhooks/JOB/retry
            return ["keys", "webhooks"].contains(parts[1]) ? "/admin/" + parts[1] : "/admin/\(parts[1])/\(parts[2])"
        }
    }

    /// The draft of `form`, posted to `action` by `user`.
    static func of(_ form: PageForm, action: String, user: UUID, now: Date) -> ConsoleDraft {
        var fields: [String: String] = [:]
        for name in kept { if let value = form[name] { fields[name] = value } }
        return ConsoleDraft(page: page(of: action), action: action, fields: fields, user: user.lowercased, expiresAt: Int(now.timeIntervalSince1970) + lifetime)
    }

    /// The cookie holding it, nil when it is too large to keep.
    func cookie(box: SecretBox) -> Cookie? {
        guard let json = try? JSONEncoder().encode(self) else { return nil }
        let sealed = box.seal(Self.prefix + String(decoding: json, as: UTF8.self))
        guard sealed.utf8.count <= Self.maxCookieBytes else { return nil }
        return Cookie(name: Self.cookieName, value: sealed, maxAge: Self.lifetime, path: "/", secure: true, httpOnly: true, sameSite: .lax)
    }

    static let spent = Cookie(name: cookieName, value: "", maxAge: 0, path: "/", secure: true, httpOnly: true, sameSite: .lax)

    /// The draft the request carries for `page`, made by `user`, while it lives.
    static func unsealed(_ request: Request, box: SecretBox, user: UUID, page: String, now: Date) -> ConsoleDraft? {
        guard let value = request.cookies[cookieName]?.value, !value.isEmpty, value.utf8.count <= maxCookieBytes, let plain = box.open(value),
            plain.hasPrefix(prefix), let draft = try? JSONDecoder().decode(ConsoleDraft.self, from: Data(plain.dropFirst(prefix.count).utf8)),
            draft.expiresAt > Int(now.timeIntervalSince1970), draft.user == user.lowercased, draft.page == page
        else { return nil }
        return draft
    }

    /// The catalog key of the notice above a refilled form ("You signed in again. The form below is as you left it…").
    static let noticeKey = "console.draft.kept"

    /// Fills a page's template values with the draft's fields.
    func apply(to values: inout [String: Any]) {
        let prefix = Self.keyPrefix(action)
        for (name, value) in fields where !Self.checkboxes(action).contains(name) { values[prefix + name] = value }
        for box in Self.checkboxes(action) { values[prefix + box] = fields[box] == "on" }
    }
}
