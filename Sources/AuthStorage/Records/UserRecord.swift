public import Foundation

/// A user as stored. The public JSON shape is ``UserResponse``.
public struct UserRecord: Codable, Sendable, Equatable {
    /// Stable id (UUID), the `sub` of access tokens.
    public var id: UUID
    /// Case-folded email, unique across users.
    public var email: String?
    /// Whether the email was proven (by a code).
    public var emailVerified: Bool
    /// Free-form name the user chose.
    public var displayName: String?
    /// Unique (case-insensitively) user name.
    public var username: String?
    /// Whether the user has no identity yet besides an anonymous session.
    public var isAnonymous: Bool
    /// Linked identities, in the order they were linked.
    public var identities: [Identity]
    /// Provider-owned private data (a PIN hash, a password hash), by provider id; never sent to clients.
    /// Read and write it with ``secret(_:as:)`` and ``setSecret(_:_:)``.
    public var secrets: [String: JSONValue]
    /// Creation time.
    public var createdAt: Date
    /// Last change.
    public var updatedAt: Date
    /// When an operator disabled the user (`authd users disable`); a disabled user cannot sign in.
    public var disabledAt: Date?
    /// `user_metadata`: what the user keeps about itself (`PATCH /me`), empty when none.
    public var userMetadata: [String: JSONValue] = [:]
    /// `app_metadata`: what the app's backend keeps about the user (service keys, the admin CLI),
    /// carried in access tokens; empty when none.
    public var appMetadata: [String: JSONValue] = [:]
    /// The operator's groups of the user (`family`, `admins`), sorted, without repeats: which apps
    /// registered `--allowed-groups` the user may sign in to. A field of its own, so a backend that
    /// replaces `app_metadata` never touches it.
    public var groups: [String] = []
    /// The person's language, a BCP 47 tag (`de`, `pt-BR`): set from `Accept-Language` at sign-up,
    /// changed with `PATCH /me` and on `/account`; what mail to them is written in.
    public var locale: String?
    /// Counts the times every session of the user was ended for a credential change (a password
    /// change or reset, a PIN change). A sign-in is started only if it is unchanged since the
    /// credential it checked was read: one racing such a change cannot outlive it.
    package var credentialVersion: Int = 0

    /// Creates a user.
    package init(
        id: UUID = SecureRandom.uuid(), email: String? = nil, emailVerified: Bool = false, displayName: String? = nil,
        username: String? = nil, isAnonymous: Bool = false, identities: [Identity] = [], secrets: [String: JSONValue] = [:],
        createdAt: Date, updatedAt: Date? = nil
    ) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.username = username
        self.isAnonymous = isAnonymous
        self.identities = identities
        self.secrets = secrets
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// Provider ids of the linked identities, without repeats, in link order.
    public var authProviders: [String] {
        var seen = Set<String>()
        return identities.map(\.provider).filter { seen.insert($0).inserted }
    }

    package enum CodingKeys: String, CodingKey {
        case id, email, emailVerified = "email_verified", displayName = "display_name", username
        case isAnonymous = "is_anonymous", identities, secrets, createdAt = "created_at", updatedAt = "updated_at"
        case disabledAt = "disabled_at", credentialVersion = "credential_version"
        case userMetadata = "user_metadata", appMetadata = "app_metadata", groups, locale
    }

    /// Decodes it from its JSON.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try c.decode(Bool.self, forKey: .emailVerified)
        displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
        username = try c.decodeIfPresent(String.self, forKey: .username)
        isAnonymous = try c.decode(Bool.self, forKey: .isAnonymous)
        identities = try c.decode([Identity].self, forKey: .identities)
        secrets = try c.decode([String: JSONValue].self, forKey: .secrets)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
        disabledAt = try c.decodeIfPresent(Date.self, forKey: .disabledAt)
        credentialVersion = try c.decodeIfPresent(Int.self, forKey: .credentialVersion) ?? 0
        userMetadata = try c.decodeIfPresent([String: JSONValue].self, forKey: .userMetadata) ?? [:]
        appMetadata = try c.decodeIfPresent([String: JSONValue].self, forKey: .appMetadata) ?? [:]
        groups = try c.decodeIfPresent([String].self, forKey: .groups) ?? []
        locale = try c.decodeIfPresent(String.self, forKey: .locale)
    }

    /// Encodes it as its JSON.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encodeIfPresent(email, forKey: .email)
        try c.encode(emailVerified, forKey: .emailVerified)
        try c.encodeIfPresent(displayName, forKey: .displayName)
        try c.encodeIfPresent(username, forKey: .username)
        try c.encode(isAnonymous, forKey: .isAnonymous)
        try c.encode(identities, forKey: .identities)
        try c.encode(secrets, forKey: .secrets)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encodeIfPresent(disabledAt, forKey: .disabledAt)
        // Absent while 0, so records of users who never changed a credential stay as they were.
        if credentialVersion != 0 { try c.encode(credentialVersion, forKey: .credentialVersion) }
        if !userMetadata.isEmpty { try c.encode(userMetadata, forKey: .userMetadata) }
        if !appMetadata.isEmpty { try c.encode(appMetadata, forKey: .appMetadata) }
        if !groups.isEmpty { try c.encode(groups, forKey: .groups) }
        try c.encodeIfPresent(locale, forKey: .locale)
    }
}

extension UserRecord {
    /// Decodes the provider-owned value stored under `key`, if any.
    public func secret<T: Decodable>(_ key: String, as type: T.Type) -> T? {
        guard let value = secrets[key], let data = try? JSONEncoder().encode(value) else { return nil }
        return try? JSONDecoder().decode(T.self, from: data)
    }

    /// Stores (or with nil removes) a provider-owned value under `key`.
    public mutating func setSecret<T: Encodable>(_ key: String, _ value: T?) throws {
        guard let value else {
            secrets[key] = nil
            return
        }
        secrets[key] = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }
}
