public import AuthStorage
import Foundation
public import Hummingbird

/// The user object of the contract, as clients see it.
public struct UserResponse: ResponseCodable, Sendable, Equatable {
    /// `id`: the user's UUID, lower case.
    public var id: String
    /// `email`, if any.
    public var email: String?
    /// `email_verified`: whether someone proved they read mail at `email`.
    public var emailVerified: Bool
    /// `display_name`, if set.
    public var displayName: String?
    /// `username`, if chosen.
    public var username: String?
    /// `is_anonymous`: no sign-in method but its sessions (and a PIN, if set).
    public var isAnonymous: Bool
    /// `auth_providers`: the providers of its identities.
    public var authProviders: [String]
    /// `created_at`, RFC 3339.
    public var createdAt: String
    /// `updated_at`, RFC 3339.
    public var updatedAt: String

    /// The public view of a stored user.
    public init(_ user: UserRecord) {
        id = user.id.lowercased
        email = user.email
        emailVerified = user.emailVerified
        displayName = user.displayName
        username = user.username
        isAnonymous = user.isAnonymous
        authProviders = user.authProviders
        createdAt = Timestamp.string(user.createdAt)
        updatedAt = Timestamp.string(user.updatedAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, email, emailVerified = "email_verified", displayName = "display_name", username
        case isAnonymous = "is_anonymous", authProviders = "auth_providers", createdAt = "created_at", updatedAt = "updated_at"
    }

    // Explicit nulls: the contract shows `"display_name": null`, not a missing key.
    /// Encodes it as its JSON.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(email, forKey: .email)
        try c.encode(emailVerified, forKey: .emailVerified)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(username, forKey: .username)
        try c.encode(isAnonymous, forKey: .isAnonymous)
        try c.encode(authProviders, forKey: .authProviders)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}

extension UserResponse {
    /// Written directly (see `JSONWriter`); the same JSON as ``encode(to:)``.
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("email"); w.string(email)
        w.key("email_verified"); w.bool(emailVerified)
        w.key("display_name"); w.string(displayName)
        w.key("username"); w.string(username)
        w.key("is_anonymous"); w.bool(isAnonymous)
        w.key("auth_providers"); w.strings(authProviders)
        w.key("created_at"); w.string(createdAt)
        w.key("updated_at"); w.string(updatedAt)
        w.endObject()
    }

    /// The answer, written without `JSONEncoder`.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var w = JSONWriter(capacity: 320)
        write(to: &w)
        return w.response()
    }
}

