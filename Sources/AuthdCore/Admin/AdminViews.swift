import AuthKernel
import AuthStorage
import Foundation

/// A user as the admin commands show it: the API's user object (never a secret) plus its number of
/// sessions and when it was disabled.
struct AdminUserView: Encodable, Sendable {
    var user: UserResponse
    var sessions: Int
    var disabledAt: String?

    init(_ user: UserRecord, sessions: Int) {
        self.user = UserResponse(user)
        self.sessions = sessions
        disabledAt = user.disabledAt.map(Timestamp.string)
    }

    private enum CodingKeys: String, CodingKey { case sessions, disabledAt = "disabled_at" }

    func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sessions, forKey: .sessions)
        try c.encode(disabledAt, forKey: .disabledAt)
    }
}

/// A session as the admin commands show it: never a token or its hash.
struct AdminSessionView: Codable, Sendable {
    var id: String
    var deviceName: String?
    var platform: String?
    var amr: [String]
    var createdAt: String
    var lastUsedAt: String
    var expiresAt: String
    /// `session` or `api_key`.
    var kind: String
    /// An API key's prefix, `authd_ak_XXXXXXXX…`: enough to tell keys apart, never the secret.
    var keyPrefix: String?

    init(_ s: SessionRecord) {
        id = s.id.lowercased
        kind = s.kind?.rawValue ?? "session"
        keyPrefix = s.keyPrefix.map { SessionService.apiKeyPrefix + $0 + "…" }
        deviceName = s.deviceName
        platform = s.platform
        amr = s.amr
        createdAt = Timestamp.string(s.createdAt)
        lastUsedAt = Timestamp.string(s.lastUsedAt)
        expiresAt = Timestamp.string(s.expiresAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, deviceName = "device_name", platform, amr, createdAt = "created_at", lastUsedAt = "last_used_at", expiresAt = "expires_at"
        case kind, keyPrefix = "key_prefix"
    }
}

/// A service key as the admin commands show it: its name and prefix, never its secret.
struct AdminServiceKeyView: Codable, Sendable {
    var name: String
    var prefix: String
    var createdAt: String
    enum CodingKeys: String, CodingKey { case name, prefix, createdAt = "created_at" }
}

/// An operator of the console as `authd admins list` shows one.
struct AdminOperatorView: Codable, Sendable {
    var id: String
    var email: String
    var grantedAt: String
    var grantedBy: String
    enum CodingKeys: String, CodingKey { case id, email, grantedAt = "granted_at", grantedBy = "granted_by" }
}

/// An OpenID client as the admin commands show it: never its secret's hash.
struct AdminClientView: Codable, Sendable {
    var clientID: String
    var name: String
    var redirectURIs: [String]
    var postLogoutRedirectURIs: [String]
    var isPublic: Bool
    var firstParty: Bool
    var pkceOptional: Bool
    var idTokenAlg: String
    var claims: [String]
    var allowPin: Bool
    var unverifiedEmail: Bool
    var allowedGroups: [String]
    var logoURI: String?
    var previousSecretExpiresAt: String?
    var createdAt: String
    enum CodingKeys: String, CodingKey {
        case clientID = "client_id", name, redirectURIs = "redirect_uris", postLogoutRedirectURIs = "post_logout_redirect_uris", isPublic = "public"
        case firstParty = "first_party", pkceOptional = "pkce_optional", idTokenAlg = "id_token_alg", claims, allowPin = "allow_pin"
        case unverifiedEmail = "unverified_email", allowedGroups = "allowed_groups", previousSecretExpiresAt = "previous_secret_expires_at"
        case createdAt = "created_at", logoURI = "logo_uri"
    }

    init(_ c: OpenIDClient, now: Date) {
        (clientID, name, redirectURIs, postLogoutRedirectURIs) = (c.id, c.name, c.redirectURIs, c.postLogoutRedirectURIs)
        (isPublic, firstParty, pkceOptional, idTokenAlg) = (c.isPublic, c.firstParty, c.pkceOptional, c.idTokenAlg)
        (claims, allowPin, unverifiedEmail, createdAt) = (c.claims, c.allowPin, c.unverifiedEmail, Timestamp.string(c.createdAt))
        (allowedGroups, logoURI) = (c.allowedGroups, c.logoURI)
        previousSecretExpiresAt = c.previousSecretExpiresAt.flatMap { $0 > now ? Timestamp.string($0) : nil }
    }

    /// The lines `clients show` prints.
    var text: String {
        var lines = [
            "client_id: \(clientID)", "name: \(name)", "kind: " + (isPublic ? "public" : "confidential") + (firstParty ? ", first-party" : ""),
            "redirect_uris: " + redirectURIs.joined(separator: " "), "id_token_alg: \(idTokenAlg)", "pkce: " + (pkceOptional ? "optional" : "required"),
        ]
        if !postLogoutRedirectURIs.isEmpty { lines.append("post_logout_redirect_uris: " + postLogoutRedirectURIs.joined(separator: " ")) }
        if !claims.isEmpty { lines.append("claims: " + claims.joined(separator: ",")) }
        if allowPin { lines.append("allow_pin: true") }
        if unverifiedEmail { lines.append("unverified_email: true") }
        if let logoURI { lines.append("logo_uri: " + (logoURI.hasPrefix("data:") ? "(a data: URI of \(logoURI.utf8.count) bytes)" : logoURI)) }
        lines.append("allowed_groups: " + (allowedGroups.isEmpty ? "everyone" : allowedGroups.joined(separator: ",")))
        if let previousSecretExpiresAt { lines.append("previous secret works until: \(previousSecretExpiresAt)") }
        lines.append("created_at: \(createdAt)")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A signing key as the admin commands show it: its public id, never its seed.
struct AdminKeyView: Codable, Sendable {
    var kid: String
    var createdAt: String
    var retiredAt: String?
    /// `signing`, `verifying` (retired, still in the JWKS) or `expired` (retired, out of the JWKS).
    var state: String

    init(_ key: SigningKey, active: Bool, published: Bool) {
        kid = key.kid
        createdAt = Timestamp.string(key.createdAt)
        retiredAt = key.retiredAt.map(Timestamp.string)
        state = active ? "signing" : published ? "verifying" : "expired"
    }

    enum CodingKeys: String, CodingKey { case kid, createdAt = "created_at", retiredAt = "retired_at", state }
}

/// Tables and JSON for the admin commands.
enum AdminFormat {
    static func json(_ value: some Encodable) throws -> AdminOutput {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return AdminOutput(text: String(decoding: try encoder.encode(value), as: UTF8.self) + "\n")
    }

    static func table(_ header: [String], _ rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in i == cells.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
    }

    static func usersTable(_ users: [AdminUserView]) -> String {
        table(
            ["ID", "EMAIL", "USERNAME", "PROVIDERS", "SESSIONS", "CREATED", "STATUS"],
            users.map {
                [$0.user.id, $0.user.email ?? "-", $0.user.username ?? "-", $0.user.authProviders.joined(separator: ",").ifEmpty("-"),
                 String($0.sessions), $0.user.createdAt, $0.disabledAt == nil ? "active" : "disabled"]
            }
        ) + "\(users.count) user\(users.count == 1 ? "" : "s")\n"
    }

    static func userDetails(_ view: AdminUserView) -> String {
        let u = view.user
        return table(
            ["FIELD", "VALUE"],
            [
                ["id", u.id], ["email", u.email ?? "-"], ["email verified", u.emailVerified ? "yes" : "no"],
                ["username", u.username ?? "-"], ["display name", u.displayName ?? "-"], ["anonymous", u.isAnonymous ? "yes" : "no"],
                ["providers", u.authProviders.joined(separator: ", ").ifEmpty("-")], ["groups", u.groups.joined(separator: ", ").ifEmpty("-")],
                ["sessions", String(view.sessions)],
                ["created", u.createdAt], ["updated", u.updatedAt], ["disabled", view.disabledAt ?? "no"],
            ]
        )
    }

    static func sessionsTable(_ sessions: [AdminSessionView]) -> String {
        table(
            ["ID", "KIND", "DEVICE OR KEY", "PLATFORM", "VIA", "CREATED", "LAST USED", "EXPIRES"],
            sessions.map { s in
                // A key by its name and prefix, as the audit log names it; never its secret.
                let label = s.keyPrefix.map { "\(s.deviceName ?? "-") (\($0))" } ?? (s.deviceName ?? "-")
                return [
                    s.id, s.kind, label, s.platform ?? "-", s.amr.joined(separator: ","), s.createdAt, s.lastUsedAt,
                    s.expiresAt.hasPrefix("9999-") ? "never" : s.expiresAt,
                ]
            }
        ) + "\(sessions.count) session\(sessions.count == 1 ? "" : "s")\n"
    }

    static func keysTable(_ keys: [AdminKeyView]) -> String {
        table(["KID", "CREATED", "RETIRED", "STATE"], keys.map { [$0.kid, $0.createdAt, $0.retiredAt ?? "-", $0.state] })
    }
}

extension String {
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
