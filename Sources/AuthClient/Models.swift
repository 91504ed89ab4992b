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

    enum CodingKeys: String, CodingKey {
        case id, email, emailVerified = "email_verified", displayName = "display_name", username
        case isAnonymous = "is_anonymous", authProviders = "auth_providers", createdAt = "created_at", updatedAt = "updated_at"
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
    enum CodingKeys: String, CodingKey { case id, deviceName = "device_name", platform, createdAt = "created_at", lastUsedAt = "last_used_at", current }
}

/// A request waiting for this user's approval (e.g. a password reset from another device).
public struct Approval: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String
    public var createdAt: String
    public var expiresAt: String
    public var deviceName: String?
    enum CodingKeys: String, CodingKey { case id, kind, createdAt = "created_at", expiresAt = "expires_at", deviceName = "device_name" }
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
