import Foundation

/// A user as the admin commands show it: never a secret.
struct AdminUserView: Codable, Sendable {
    var id: String
    var email: String?
    var emailVerified: Bool
    var username: String?
    var displayName: String?
    var isAnonymous: Bool
    var providers: [String]
    var sessions: Int
    var createdAt: String
    var updatedAt: String
    var disabledAt: String?

    init(_ user: UserRecord, sessions: Int) {
        id = user.id.lowercased
        email = user.email
        emailVerified = user.emailVerified
        username = user.username
        displayName = user.displayName
        isAnonymous = user.isAnonymous
        providers = user.authProviders
        self.sessions = sessions
        createdAt = Timestamp.string(user.createdAt)
        updatedAt = Timestamp.string(user.updatedAt)
        disabledAt = user.disabledAt.map(Timestamp.string)
    }

    enum CodingKeys: String, CodingKey {
        case id, email, emailVerified = "email_verified", username, displayName = "display_name", isAnonymous = "is_anonymous"
        case providers, sessions, createdAt = "created_at", updatedAt = "updated_at", disabledAt = "disabled_at"
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

    init(_ s: SessionRecord) {
        id = s.id.lowercased
        deviceName = s.deviceName
        platform = s.platform
        amr = s.amr
        createdAt = Timestamp.string(s.createdAt)
        lastUsedAt = Timestamp.string(s.lastUsedAt)
        expiresAt = Timestamp.string(s.expiresAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, deviceName = "device_name", platform, amr, createdAt = "created_at", lastUsedAt = "last_used_at", expiresAt = "expires_at"
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
                [$0.id, $0.email ?? "-", $0.username ?? "-", $0.providers.joined(separator: ",").ifEmpty("-"), String($0.sessions), $0.createdAt,
                 $0.disabledAt == nil ? "active" : "disabled"]
            }
        ) + "\(users.count) user\(users.count == 1 ? "" : "s")\n"
    }

    static func userDetails(_ u: AdminUserView) -> String {
        table(
            ["FIELD", "VALUE"],
            [
                ["id", u.id], ["email", u.email ?? "-"], ["email verified", u.emailVerified ? "yes" : "no"],
                ["username", u.username ?? "-"], ["display name", u.displayName ?? "-"], ["anonymous", u.isAnonymous ? "yes" : "no"],
                ["providers", u.providers.joined(separator: ", ").ifEmpty("-")], ["sessions", String(u.sessions)],
                ["created", u.createdAt], ["updated", u.updatedAt], ["disabled", u.disabledAt ?? "no"],
            ]
        )
    }

    static func sessionsTable(_ sessions: [AdminSessionView]) -> String {
        table(
            ["ID", "DEVICE", "PLATFORM", "VIA", "CREATED", "LAST USED", "EXPIRES"],
            sessions.map { [$0.id, $0.deviceName ?? "-", $0.platform ?? "-", $0.amr.joined(separator: ","), $0.createdAt, $0.lastUsedAt, $0.expiresAt] }
        ) + "\(sessions.count) session\(sessions.count == 1 ? "" : "s")\n"
    }

    static func keysTable(_ keys: [AdminKeyView]) -> String {
        table(["KID", "CREATED", "RETIRED", "STATE"], keys.map { [$0.kid, $0.createdAt, $0.retiredAt ?? "-", $0.state] })
    }
}

extension String {
    fileprivate func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
