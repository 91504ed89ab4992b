public import Foundation

/// The signed-in user (contract: the user object).
public struct AuthUser: Codable, Sendable, Equatable {
    public var id: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var username: String?
    public var isAnonymous: Bool
    public var authProviders: [String]
    public var createdAt: String
    public var updatedAt: String
    /// The user's own metadata (``AuthClient/updateUserMetadata(_:)``), empty when none.
    public var userMetadata: [String: MetadataValue]
    /// What the app's backend set about the user (read-only here; also in the access token).
    public var appMetadata: [String: MetadataValue]
    /// The operator's groups of the user (which of the deployment's apps it may use), empty when none.
    public var groups: [String]
    /// The person's language (a BCP 47 tag such as `de`), which the server writes mail in
    /// (``AuthClient/updateLocale(_:)``); nil when not known.
    public var locale: String?

    enum CodingKeys: String, CodingKey {
        case id, email, emailVerified = "email_verified", displayName = "display_name", username
        case isAnonymous = "is_anonymous", authProviders = "auth_providers", createdAt = "created_at", updatedAt = "updated_at"
        case userMetadata = "user_metadata", appMetadata = "app_metadata", groups, locale
    }

    /// Decodes a user; servers before metadata existed send none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try c.decode(Bool.self, forKey: .emailVerified)
        displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
        username = try c.decodeIfPresent(String.self, forKey: .username)
        isAnonymous = try c.decode(Bool.self, forKey: .isAnonymous)
        authProviders = try c.decode([String].self, forKey: .authProviders)
        createdAt = try c.decode(String.self, forKey: .createdAt)
        updatedAt = try c.decode(String.self, forKey: .updatedAt)
        userMetadata = try c.decodeIfPresent([String: MetadataValue].self, forKey: .userMetadata) ?? [:]
        appMetadata = try c.decodeIfPresent([String: MetadataValue].self, forKey: .appMetadata) ?? [:]
        groups = try c.decodeIfPresent([String].self, forKey: .groups) ?? []
        locale = try c.decodeIfPresent(String.self, forKey: .locale)
    }
}

/// A JSON value inside `user_metadata` or `app_metadata`.
public enum MetadataValue: Codable, Sendable, Equatable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([MetadataValue])
    /// An object.
    case object([String: MetadataValue])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([MetadataValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: MetadataValue].self)) }
    }

    /// Encodes it as JSON.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// As `JSONSerialization` takes it.
    var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let b): b
        case .number(let n): n
        case .string(let s): s
        case .array(let a): a.map(\.foundationValue)
        case .object(let o): o.mapValues(\.foundationValue)
        }
    }
}

/// A token pair and when the access token expires (by this device's clock).
public struct AuthTokens: Codable, Sendable, Equatable {
    /// The Bearer token.
    public var accessToken: String
    /// The single-use refresh token.
    public var refreshToken: String
    /// When the access token expires.
    public var expiresAt: Date

    /// Creates tokens.
    public init(accessToken: String, refreshToken: String, expiresAt: Date) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }
}

/// The answer to a sign-in: tokens and the user.
public struct AuthSession: Sendable, Equatable {
    /// The tokens (also saved in the token store).
    public var tokens: AuthTokens
    /// The user.
    public var user: AuthUser
}

struct SessionResponse: Decodable {
    var accessToken: String
    var refreshToken: String
    var tokenType: String
    var expiresIn: Int
    var user: AuthUser
    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", refreshToken = "refresh_token", tokenType = "token_type", expiresIn = "expires_in", user
    }
}

/// A signed-in device, as `GET /sessions` lists it.
public struct AuthSessionInfo: Codable, Sendable, Equatable {
    public var id: String
    public var deviceName: String?
    public var platform: String?
    public var createdAt: String
    public var lastUsedAt: String
    /// Whether this is the session making the call.
    public var current: Bool
    /// `session` (a sign-in) or `api_key`; nil from servers that predate API keys.
    public var kind: String?
    enum CodingKeys: String, CodingKey { case id, deviceName = "device_name", platform, createdAt = "created_at", lastUsedAt = "last_used_at", current, kind }
}

/// An API key as `GET /api-keys` lists it: never its secret.
public struct APIKey: Codable, Sendable, Equatable {
    public var id: String
    /// What the person called it (usually the device that keeps it).
    public var name: String
    /// The first 8 characters after `authd_ak_`, to tell keys apart.
    public var prefix: String
    public var createdAt: String
    /// Nil until the key is first exchanged.
    public var lastUsedAt: String?
    /// Nil for a key that lives until revoked.
    public var expiresAt: String?
    enum CodingKeys: String, CodingKey { case id, name, prefix, createdAt = "created_at", lastUsedAt = "last_used_at", expiresAt = "expires_at" }
}

/// A key just created: keep ``secret`` (in the keychain); it is never shown again.
public struct CreatedAPIKey: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// `authd_ak_…`.
    public var secret: String
    public var prefix: String
    public var createdAt: String
    public var expiresAt: String?
    enum CodingKeys: String, CodingKey { case id, name, secret = "api_key", prefix, createdAt = "created_at", expiresAt = "expires_at" }
}

/// A device sign-in waiting for approval, as a signed-in app sees it. The labels are what the
/// device reported about itself: show them as such.
public struct PendingDeviceSignIn: Codable, Sendable, Equatable {
    public var userCode: String
    public var clientID: String?
    public var deviceName: String?
    public var platform: String?
    public var createdAt: String
    public var expiresAt: String
    enum CodingKeys: String, CodingKey {
        case userCode = "user_code", clientID = "client_id", deviceName = "device_name", platform, createdAt = "created_at", expiresAt = "expires_at"
    }
}

/// A device sign-in in progress (RFC 8628): show ``userCode`` and ``verificationURI`` (or a QR code
/// of ``verificationURIComplete``), then wait with ``AuthClient/waitForDeviceSignIn(_:)``.
public struct DeviceSignIn: Codable, Sendable, Equatable {
    /// What the device polls with; keep it to itself.
    public var deviceCode: String
    /// What the person types, `XXXX-XXXX`.
    public var userCode: String
    /// Where the person goes.
    public var verificationURI: String
    /// The same with the code filled in.
    public var verificationURIComplete: String
    /// Seconds before the code expires.
    public var expiresIn: Int
    /// Seconds to wait between polls.
    public var interval: Int
    enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code", userCode = "user_code", verificationURI = "verification_uri"
        case verificationURIComplete = "verification_uri_complete", expiresIn = "expires_in", interval
    }
}

/// A request waiting for this user's approval: a sign-in (`sign_in`) or a password reset from
/// another device. It never carries the match code: the person types the number the other device
/// shows. The labels are what that device reported about itself (and the network it came from):
/// show them as such.
public struct Approval: Codable, Sendable, Equatable {
    /// The request's id, for ``AuthClient/approve(_:matchCode:)`` and ``AuthClient/deny(_:notMe:)``.
    public var id: String
    /// What approving does: `sign_in` signs the other device in; other kinds come from providers (e.g. a password reset).
    public var kind: String
    /// When the request was made (RFC 3339).
    public var createdAt: String
    /// When it expires unanswered (RFC 3339).
    public var expiresAt: String
    /// The name the other device gave itself.
    public var deviceName: String?
    /// The platform the other device reported (e.g. `ios`, `linux`); nil when it sent none or the server predates it.
    public var platform: String?
    /// The network the request came from, e.g. `203.0.113.0/24` (IPv4 /24, IPv6 /48); nil from servers that predate it.
    public var network: String?
    enum CodingKeys: String, CodingKey {
        case id, kind, createdAt = "created_at", expiresAt = "expires_at", deviceName = "device_name", platform, network
    }
}

/// A sign-in waiting for the person to approve it on a device where they are signed in: show
/// ``matchCode`` big, tell them to type it there, and wait with ``AuthClient/waitForSignInApproval(_:)``.
/// It is `Codable` so an app can keep it across a relaunch; the secret it polls with stays inside.
public struct SignInApprovalRequest: Codable, Sendable, Equatable {
    /// The request's id (what the signed-in device sees in ``AuthClient/approvals()``).
    public var requestID: String
    /// The two digits to show, e.g. `07`: the person types them on the signed-in device.
    public var matchCode: String
    /// Seconds before the request expires unanswered.
    public var expiresIn: Int
    /// Seconds to wait between polls.
    public var interval: Int
    /// The secret that proves this device made the request (a sign-in approval).
    var requestToken: String?
    /// The sign-in challenge this request answers (a second-factor approval).
    var challenge: String?

    enum CodingKeys: String, CodingKey {
        case requestID = "request_id", matchCode = "match_code", expiresIn = "expires_in", interval
        case requestToken = "request_token", challenge
    }
}

/// A device reset in progress: show `matchCode` to the person, who types it on a signed-in device.
public struct DeviceResetRequest: Codable, Sendable, Equatable {
    public var requestID: String
    public var expiresAt: String
    public var matchCode: String
    enum CodingKeys: String, CodingKey { case requestID = "request_id", expiresAt = "expires_at", matchCode = "match_code" }
}

/// Where a device reset stands.
public enum DeviceResetStatus: String, Codable, Sendable {
    case pending, approved, denied, expired, completed
}

/// A code was mailed; it lives this many seconds.
public struct CodeSent: Codable, Sendable, Equatable {
    public var message: String
    public var expiresIn: Int?
    enum CodingKeys: String, CodingKey { case message, expiresIn = "expires_in" }
}
