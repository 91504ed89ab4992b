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
    /// `user_metadata`: the user's own object (`PATCH /me`), `{}` when none.
    public var userMetadata: [String: JSONValue]
    /// `app_metadata`: the object the app's backend set (the admin API), `{}` when none.
    public var appMetadata: [String: JSONValue]
    /// `groups`: the operator's groups of the user, `[]` when none (contract §17).
    public var groups: [String]
    /// `locale`: the person's language (BCP 47), or nil when not known (contract §18).
    public var locale: String?

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
        userMetadata = user.userMetadata
        appMetadata = user.appMetadata
        groups = user.groups
        locale = user.locale
    }

    enum CodingKeys: String, CodingKey {
        case id, email, emailVerified = "email_verified", displayName = "display_name", username
        case isAnonymous = "is_anonymous", authProviders = "auth_providers", createdAt = "created_at", updatedAt = "updated_at"
        case userMetadata = "user_metadata", appMetadata = "app_metadata", groups, locale
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
        try c.encode(userMetadata, forKey: .userMetadata)
        try c.encode(appMetadata, forKey: .appMetadata)
        try c.encode(groups, forKey: .groups)
        try c.encode(locale, forKey: .locale)
    }
}

extension UserResponse {
    /// Written directly (see `JSONWriter`); the same JSON as ``encode(to:)``. With `closing` false
    /// the object is left open for the caller to add members (the admin API's `disabled`).
    package func write(to w: inout JSONWriter, closing: Bool = true) {
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
        w.key("user_metadata"); w.value(.object(userMetadata))
        w.key("app_metadata"); w.value(.object(appMetadata))
        w.key("groups"); w.strings(groups)
        w.key("locale"); w.string(locale)
        if closing { w.endObject() }
    }

    /// The answer, written without `JSONEncoder`.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var w = JSONWriter(capacity: 384)
        write(to: &w)
        return w.response()
    }
}

