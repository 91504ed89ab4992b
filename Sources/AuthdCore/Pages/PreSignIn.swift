import AuthKernel
import Foundation
import Hummingbird

/// A browser's sign-in before it has a session: its CSRF token, where it goes afterwards, the
/// provider's pending state and a pending second-factor challenge. Sealed in a `__Host-` cookie, so
/// a visitor who only looks costs no write; bounded, and dead after 15 minutes.
struct PreSignIn: Codable, Sendable, Equatable {
    var csrf: String
    var returnTo: String
    /// The provider whose steps are under way, and its state.
    var provider: String?
    var state: [String: String] = [:]
    /// A second-factor challenge the sign-in policies asked for, and the factors offered.
    var challenge: String?
    var factors: [String] = []
    /// The sign-in returns to a client registered `--allow-pin`: user name + PIN is offered.
    var allowPin = false
    /// The app address the sign-in ends at (an authorize request's redirect URI), as a CSP source.
    var formTarget: String?
    /// The OpenID client whose authorize request sent the person here: `/login` says "Sign in to APP".
    var client: String?
    /// The address the person typed, kept across the sign-in's pages (never a password).
    var email: String?
    /// An authorize request (`prompt=login`, `max_age`) wants a sign-in made at or after this time:
    /// `/login` asks for one even in a signed-in browser.
    var signInAfter: Int?
    /// After that sign-in: the authorize request it answers (``freshness(_:)``). Sealed here, never
    /// a query parameter, so no one meets `prompt=login` by editing a URL (contract §17).
    var freshFor: String?
    var expiresAt: Int

    static let cookieName = "__Host-authd-signin"
    static let lifetime = 900
    /// The longest cookie read.
    static let maxCookieBytes = 3000

    static func new(returnTo: String, now: Date) -> PreSignIn {
        PreSignIn(csrf: Base64URL.encode(SecureRandom.bytes(24)), returnTo: returnTo, expiresAt: Int(now.timeIntervalSince1970) + lifetime)
    }

    /// What identifies one authorize request: its client, redirect URI, state, nonce and PKCE
    /// challenge, hashed. A new sign-in answers that request only.
    static func freshness(_ query: PageForm) -> String {
        let parts = ["client_id", "redirect_uri", "state", "nonce", "code_challenge"].map { query[$0] ?? "" }
        return Base64URL.encode(SHA256.hash(parts.joined(separator: "\u{0}")))
    }

    /// Whether this state is the mark a sign-in left for the authorize request `query`: that sign-in
    /// was asked for by it, made at or after the time it asked, by the browser's current session.
    func marksFreshSignIn(for query: PageForm, signedInAt: Date) -> Bool {
        guard let freshFor, let after = signInAfter else { return false }
        return freshFor == Self.freshness(query) && Int(signedInAt.timeIntervalSince1970) >= after
    }

    /// The state a cookie seals, while it lives.
    static func unsealed(_ request: Request, box: SecretBox, now: Date) -> PreSignIn? {
        guard let cookie = request.cookies[cookieName]?.value, !cookie.isEmpty, cookie.utf8.count <= maxCookieBytes,
            let plain = box.open(cookie), let state = try? JSONDecoder().decode(PreSignIn.self, from: Data(plain.utf8)),
            state.expiresAt > Int(now.timeIntervalSince1970)
        else { return nil }
        return state
    }

    /// The cookie holding this state (an empty one that expires at once ends it).
    func cookie(box: SecretBox) throws -> Cookie {
        let json = String(decoding: try JSONEncoder().encode(self), as: UTF8.self)
        let sealed = box.seal(json)
        guard sealed.utf8.count <= Self.maxCookieBytes else { throw AuthError.invalidRequest("This sign-in holds too much; start again.").worded("login.error.too_much") }
        return Self.cookie(sealed, maxAge: Self.lifetime)
    }

    static func cookie(_ value: String, maxAge: Int) -> Cookie {
        // Secure always: browsers refuse a __Host- cookie without it, and treat loopback as secure.
        Cookie(name: cookieName, value: value, maxAge: maxAge, path: "/", secure: true, httpOnly: true, sameSite: .lax)
    }
}

/// The browser's session cookie: the secret of a session of kind `browser`.
enum BrowserCookie {
    static let name = "__Host-authd"

    static func cookie(_ value: String, maxAge: Int) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: true, httpOnly: true, sameSite: .lax)
    }
}
