import AuthKernel
import Foundation
import Hummingbird

/// The one-line success notice a form leaves for the page it redirects to ("Passkey removed."):
/// sealed in a short-lived cookie, so the text cannot be set by a link, and shown once.
enum NoticeCookie {
    static let name = "__Host-authd-notice"
    static let lifetime = 60
    static let maxLength = 300
    /// Told apart from the other values the pages' key seals (a pre-sign-in's state).
    static let prefix = "notice\u{0}"

    /// The cookie carrying `text` for the browser's session `session`: another session (the next
    /// person on a shared computer) is not shown it.
    static func cookie(_ text: String, box: SecretBox, session: UUID) -> Cookie {
        Cookie(
            name: name, value: box.seal(prefix + session.uuidString + "\u{0}" + String(text.prefix(maxLength))), maxAge: lifetime, path: "/", secure: true,
            httpOnly: true, sameSite: .strict)
    }

    /// The cookie that ends it, once shown.
    static let spent = Cookie(name: name, value: "", maxAge: 0, path: "/", secure: true, httpOnly: true, sameSite: .strict)

    /// The notice the request carries for the browser's session `session`, if any and sealed by us.
    static func notice(_ request: Request, box: SecretBox, session: UUID) -> String? {
        guard let value = request.cookies[name]?.value, !value.isEmpty, value.utf8.count <= 1024, let text = box.open(value),
            text.hasPrefix(prefix + session.uuidString + "\u{0}")
        else { return nil }
        return String(text.dropFirst(prefix.count + session.uuidString.count + 1).prefix(maxLength))
    }
}
