public import Foundation

/// A signed-in device: one per sign-in, alive until logout, revocation, reuse detection or refresh expiry.
public struct SessionRecord: Codable, Sendable, Equatable {
    /// Session id, the `sid` claim.
    public var id: UUID
    /// Owner.
    public var userID: UUID
    /// Client-supplied label.
    public var deviceName: String?
    /// Client-supplied platform label (`ios`, `linux`, …).
    public var platform: String?
    /// The network it signed in from (an IPv4 /24 or an IPv6 /48), sealed: its owner tells their
    /// own places from a stranger's on the account page, and no address is kept in clear.
    public var network: String?
    /// Providers used to sign in, the `amr` claim.
    public var amr: [String]
    /// Sign-in time.
    public var createdAt: Date
    /// Last refresh.
    public var lastUsedAt: Date
    /// When the newest refresh token stops working.
    public var expiresAt: Date
    /// SHA-256 (hex) of the refresh tokens that may be used now. Normally one; more only after
    /// concurrent refreshes within the reuse grace, so whichever answer the device kept works.
    package var refreshHashes: [String]
    /// Recently rotated-out refresh tokens: usable within the grace, reuse after it revokes the session.
    package var retired: [RetiredRefreshToken]
    /// What it is: a sign-in (nil, stored as nothing) or an API key (contract §6), whose one hash in
    /// ``refreshHashes`` is the key's and is exchanged, never rotated.
    public var kind: Kind?
    /// An API key's first 8 characters after `authd_ak_`, which tell keys apart; nil for a sign-in.
    public var keyPrefix: String?
    /// The OpenID client whose tokens a session of kind `client` holds.
    public var clientID: String?
    /// What that client was granted: `AUTH_TIME BROWSER_SESSION_ID SCOPE…`, space-separated.
    package var clientGrant: String?
    /// The last interactive sign-in that met every factor, when it was before this session began: a
    /// sign-in approved from another device carries the approving session's. Nil: ``createdAt``.
    public var authTime: Date?

    /// The kinds of session.
    public enum Kind: String, Codable, Sendable {
        /// A long-lived key a device exchanges for short-lived access tokens.
        case apiKey = "api_key"
        /// A person signed in on authd's own pages: its secret is the browser's `__Host-` cookie,
        /// never exchanged for tokens.
        case browser
        /// Tokens an OpenID client got from an authorization code: named after the client, ended
        /// with the user's other sessions, and by a replay of its code.
        case client
    }

    /// Whether it is an API key.
    public var isAPIKey: Bool { kind == .apiKey }
    /// Whether it is a browser's sign-in on authd's pages.
    public var isBrowser: Bool { kind == .browser }

    /// Whether it may only read and edit the profile, list sessions, log out and refresh (contract
    /// §5): made by an API key or by the device flow, never by a person signing in on this device.
    public var isLimited: Bool { kind == .apiKey || amr.contains("api_key") || amr.contains("device") }

    /// The `expires_at` of an API key that does not expire (9999-12-31T23:59:59Z).
    public static let neverExpires = Date(timeIntervalSince1970: 253_402_300_799)

    /// Creates a session.
    package init(
        id: UUID = SecureRandom.uuid(), userID: UUID, deviceName: String?, platform: String?, amr: [String],
        createdAt: Date, expiresAt: Date, refreshHash: String
    ) {
        self.id = id
        self.userID = userID
        self.deviceName = deviceName
        self.platform = platform
        self.amr = amr
        self.createdAt = createdAt
        self.lastUsedAt = createdAt
        self.expiresAt = expiresAt
        self.refreshHashes = [refreshHash]
        self.retired = []
        self.kind = nil
        self.keyPrefix = nil
        self.clientID = nil
        self.clientGrant = nil
        self.authTime = nil
        self.network = nil
    }

    /// The `auth_time` of its tokens: ``authTime`` when set, else when it began.
    public var signedInAt: Date { authTime ?? createdAt }

    package enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", deviceName = "device_name", platform, amr, createdAt = "created_at"
        case lastUsedAt = "last_used_at", expiresAt = "expires_at", refreshHashes = "refresh_hashes", retired
        case kind, keyPrefix = "key_prefix", clientID = "client_id", clientGrant = "client_grant"
        case authTime = "auth_time", network
    }
}

/// A refresh token that was rotated out, kept so its reuse can be recognised.
package struct RetiredRefreshToken: Codable, Sendable, Equatable {
    /// SHA-256 (hex) of the token.
    package var hash: String
    /// When it was rotated out.
    package var retiredAt: Date

    /// Creates an entry.
    package init(hash: String, retiredAt: Date) {
        self.hash = hash
        self.retiredAt = retiredAt
    }

    package enum CodingKeys: String, CodingKey { case hash, retiredAt = "retired_at" }
}
