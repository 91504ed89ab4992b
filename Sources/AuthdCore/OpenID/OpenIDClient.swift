import AuthKernel
import AuthStorage
import Foundation

/// An app that signs people in with authd (contract §13): its redirect URIs, whether it keeps a
/// secret (only its hash is stored), and how much it is trusted.
struct OpenIDClient: Sendable, Equatable {
    var id: String
    var name: String
    var redirectURIs: [String]
    /// SHA-256 (hex) of the secret; nil for a public client (a native app, a single-page app).
    var secretHash: String?
    /// First-party: the deployment's own app; no consent is asked.
    var firstParty: Bool
    /// A confidential client that may send neither PKCE nor a nonce (Gitea's login source).
    var pkceOptional: Bool
    /// RS256 (the default: many relying parties accept nothing else), EdDSA or Ed25519.
    var idTokenAlg: String = "RS256"
    /// Where RP-initiated logout may send the person back.
    var postLogoutRedirectURIs: [String] = []
    /// `app_metadata` keys put in the ID token and userinfo as claims of the same name.
    var claims: [String] = []
    /// The sign-in page offers user name + PIN to this client's sign-ins.
    var allowPin = false
    /// The `email` claim is given even when the address is not verified (`email_verified` false).
    var unverifiedEmail = false
    /// Only members of one of these groups may sign in to the app; empty: everyone (contract §17).
    var allowedGroups: [String] = []
    /// The app's logo on the sign-in page (`https://…` or `data:image/…;base64,…`), beside its name.
    var logoURI: String?
    /// After `rotate-secret --grace`: the old secret's hash, accepted until `previousSecretExpiresAt`.
    var previousSecretHash: String?
    var previousSecretExpiresAt: Date?
    var createdAt: Date

    var isPublic: Bool { secretHash == nil }

    /// Whether `user` may sign in to this app: it names no groups, or the user is in one of them.
    func admits(_ user: UserRecord) -> Bool {
        allowedGroups.isEmpty || allowedGroups.contains(where: user.groups.contains)
    }

    init(id: String, name: String, redirectURIs: [String], secretHash: String?, createdAt: Date) {
        (self.id, self.name, self.redirectURIs, self.secretHash, self.createdAt) = (id, name, redirectURIs, secretHash, createdAt)
        (firstParty, pkceOptional) = (false, false)
    }

    /// Whether `uri` is one of the registered redirect URIs: exactly, or for a public client's
    /// loopback redirect (`http://127.0.0.1` or `http://[::1]`) with any port (RFC 8252 §7.3).
    func allows(redirect uri: String) -> Bool {
        if redirectURIs.contains(uri) { return true }
        guard isPublic, let asked = URLComponents(string: uri), asked.scheme == "http", let host = asked.host,
            host == "127.0.0.1" || host == "::1" || host == "[::1]"
        else { return false }
        return redirectURIs.contains { registered in
            guard var r = URLComponents(string: registered), r.scheme == "http", r.host == host else { return false }
            var a = asked
            (r.port, a.port) = (nil, nil)
            return r.string == a.string
        }
    }

    /// Whether `uri` is a public client's loopback or custom-scheme redirect: any local process may
    /// listen there (RFC 8252 §8.6), so consent to it is asked every time, never remembered.
    func isNativeRedirect(_ uri: String) -> Bool {
        guard isPublic else { return false }
        guard let c = URLComponents(string: uri), let scheme = c.scheme?.lowercased() else { return true }
        return scheme != "https" || ["127.0.0.1", "localhost", "::1", "[::1]"].contains(c.host ?? "")
    }

    /// A redirect URI a client may register: absolute, no fragment; `https`, a loopback `http`, or a
    /// custom scheme of a native app.
    static func isValidRedirect(_ uri: String) -> Bool {
        guard uri.utf8.count <= 2048, let c = URLComponents(string: uri), let scheme = c.scheme?.lowercased(), c.fragment == nil else { return false }
        switch scheme {
        case "https": return c.host?.isEmpty == false
        case "http": return ["127.0.0.1", "localhost", "::1", "[::1]"].contains(c.host ?? "")
        default: return scheme.contains(".") && uri.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
        }
    }
}
