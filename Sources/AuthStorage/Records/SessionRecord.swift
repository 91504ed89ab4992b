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
    }

    package enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", deviceName = "device_name", platform, amr, createdAt = "created_at"
        case lastUsedAt = "last_used_at", expiresAt = "expires_at", refreshHashes = "refresh_hashes", retired
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
