import AuthKernel
import Foundation

/// One identity provider in `oidc.providers` (contract §16): where it is, which of its tokens
/// authd accepts, and how its identities become accounts.
public struct OIDCUpstream: Sendable {
    /// What the upstream is: a plain OpenID Provider, or one whose rules differ.
    public enum Kind: String, Sendable, CaseIterable {
        /// Any OpenID Provider (GitLab, Authelia, Keycloak, another authd).
        case oidc
        /// Google: its tokens also name the issuer `accounts.google.com`.
        case google
        /// Microsoft: the issuer names the tenant (`{tenantid}`), the identity is `tid` + `oid`, emails are never trusted.
        case microsoft
        /// GitHub: OAuth 2.0 and its user API, no ID tokens.
        case github
    }

    /// How a token's `nonce` claim holds the nonce the app chose.
    public enum NonceHash: String, Sendable {
        /// The claim is the nonce.
        case none
        /// The claim is the hex SHA-256 of the nonce (Apple's SDK, Firebase).
        case sha256
    }

    /// Its name: the path part of `/api/v1/auth/oidc/NAME`, the identity's provider part.
    public var name: String
    /// The issuer, exactly as its tokens' `iss` (no trailing slash added or removed).
    public var issuer: String
    /// authd's client id there: the `aud` of the web flow's tokens.
    public var clientID: String
    /// authd's client secret there (from `client_secret_file`), for the web flow's token request.
    public var clientSecret: String?
    /// Other audiences accepted: native apps' own client ids.
    public var audiences: [String]
    /// Scopes the web flow asks for.
    public var scopes: [String]
    /// Its kind.
    public var kind: Kind
    /// The claim that names the person (`sub`).
    public var subjectClaim: String
    /// Whether its verified emails are trusted to make or join an account.
    public var trustEmail: Bool
    /// How its tokens carry the nonce.
    public var nonceHash: NonceHash
    /// Whether a native token must carry a nonce.
    public var requireNonce: Bool
    /// What the pages' button names it ("Continue with Google").
    public var label: String
    /// Whether `/login` offers it (the web flow); false for an upstream only native apps use.
    public var web: Bool
    /// The authorization endpoint, when set instead of the discovered one (GitHub's by default).
    public var authorizeURL: String?
    /// The token endpoint, when set instead of the discovered one (GitHub's by default).
    public var tokenURL: String?
    /// GitHub's user API (`https://api.github.com` by default).
    public var apiURL: String?

    /// The name's rule: lower-case letters, digits, `-` and `_`, at most 32.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 32 && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }
    }

    /// An `https://` URL, or `http://` to this machine (a test's upstream, a local identity provider).
    static func isAllowedURL(_ text: String) -> Bool {
        guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty, url.fragment == nil else { return false }
        if url.scheme == "https" { return true }
        return url.scheme == "http" && ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
    }

    /// Whether an address the upstream's discovery document names may be used: `https://`, or
    /// `http://` to this machine only when the issuer itself is there (a hostile document must not
    /// send the code and the client secret to a service on authd's own loopback).
    func allowsDiscovered(_ url: String) -> Bool {
        guard Self.isAllowedURL(url) else { return false }
        return url.hasPrefix("https://") || issuer.hasPrefix("http://")
    }

    /// Reads one entry of `oidc.providers`.
    init(name: String, _ section: inout ConfigSection) throws {
        guard Self.isValidName(name) else {
            throw ConfigError("oidc.providers: the name \"\(LogSafe.text(name, maxLength: 40))\" must be lower-case letters, digits, - or _ (at most 32)")
        }
        self.name = name
        let kindText = try section.string("kind", default: "oidc")
        guard let kind = Kind(rawValue: kindText) else {
            throw ConfigError("oidc.providers.\(name).kind must be one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.kind = kind
        issuer = try section.string("issuer", default: "")
        // GitHub has no issuer (OAuth 2.0, no ID tokens): its endpoints are named instead.
        if kind != .github {
            guard Self.isAllowedURL(issuer), !issuer.hasSuffix("/") else {
                throw ConfigError("oidc.providers.\(name).issuer must be an https:// URL (http:// only to this machine) with no trailing slash")
            }
        }
        clientID = try section.string("client_id", default: "")
        guard !clientID.isEmpty, clientID.utf8.count <= 512 else { throw ConfigError("oidc.providers.\(name).client_id is required") }
        if let file = try section.optionalString("client_secret_file") {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ConfigError("oidc.providers.\(name).client_secret_file: cannot read \(file)")
            }
            clientSecret = text.hasSuffix("\n") ? String(text.dropLast()) : text
        }
        audiences = try section.strings("audiences", default: [])
        scopes = try section.strings("scopes", default: kind == .github ? ["read:user", "user:email"] : ["openid", "email", "profile"])
        subjectClaim = try section.string("subject", default: "sub")
        trustEmail = try section.bool("trust_email", default: false)
        if trustEmail && kind == .microsoft {
            throw ConfigError("oidc.providers.\(name).trust_email cannot be set for kind microsoft: any tenant can claim any address")
        }
        let hash = try section.string("nonce_hash", default: "none")
        guard let nonceHash = NonceHash(rawValue: hash) else { throw ConfigError("oidc.providers.\(name).nonce_hash must be none or sha256") }
        self.nonceHash = nonceHash
        requireNonce = try section.bool("require_nonce", default: true)
        func url(_ key: String, github: String) throws -> String? {
            let value = try section.optionalString(key) ?? (kind == .github ? github : nil)
            if let value, !Self.isAllowedURL(value) || value.hasSuffix("/") {
                throw ConfigError("oidc.providers.\(name).\(key) must be an https:// URL (http:// only to this machine) with no trailing slash")
            }
            return value
        }
        authorizeURL = try url("authorize_url", github: "https://github.com/login/oauth/authorize")
        tokenURL = try url("token_url", github: "https://github.com/login/oauth/access_token")
        apiURL = try url("api_url", github: "https://api.github.com")
        if kind != .github, try section.optionalString("api_url") != nil {
            throw ConfigError("oidc.providers.\(name).api_url is GitHub's (kind github) only")
        }
        let defaultLabel = [Kind.google: "Google", .microsoft: "Microsoft", .github: "GitHub"][kind] ?? name
        label = try section.string("label", default: defaultLabel)
        guard !label.isEmpty, label.unicodeScalars.count <= 40, !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ConfigError("oidc.providers.\(name).label must be 1 to 40 characters")
        }
        web = try section.bool("web", default: true)
        try section.rejectUnknownKeys()
    }

    /// Whether `iss` is this upstream's, as its kind reads it.
    func accepts(issuer iss: String, discovered: String, tenant: String?) -> Bool {
        switch kind {
        case .google: return iss == issuer || iss == "accounts.google.com" || iss == "https://accounts.google.com"
        case .microsoft:
            // The discovery document of /common or /organizations names `{tenantid}`: the token's own tenant fills it.
            guard let tenant, !tenant.isEmpty, tenant.utf8.count <= 64 else { return iss == discovered }
            return iss == discovered.replacingOccurrences(of: "{tenantid}", with: tenant) || iss == issuer
        case .oidc, .github: return iss == issuer
        }
    }
}
