public import Foundation

/// A request that another signed-in device of the same user must approve (e.g. a password reset).
///
/// The approvals service knows nothing of what is approved: a kind, a user, an expiry, and a payload
/// the requesting provider reads back on completion.
public struct ApprovalRecord: Codable, Sendable, Equatable {
    /// Unguessable request id (256 random bits, base64url).
    public var id: String
    /// What is being approved, e.g. `password_reset`.
    public var kind: String
    /// Whose devices must approve; nil for a decoy made for an unknown account, which only expires.
    public var userID: UUID?
    /// HMAC-SHA-256 (hex) of the match code shown on the requesting device.
    package var matchCodeDigest: String
    /// Wrong match codes so far; three deny the request.
    package var matchAttempts: Int
    /// Stored state; ``status(at:)`` adds expiry.
    package var state: State
    /// Creation time.
    public var createdAt: Date
    /// When a pending request expires.
    public var expiresAt: Date
    /// When an approved request can no longer be completed.
    package var completeBy: Date?
    /// Label of the requesting device.
    public var deviceName: String?
    /// Provider data for completion (e.g. the new password's hash; never a plain secret).
    public var payload: [String: JSONValue]
    /// The requesting device's platform label, shown to the approving one.
    public var platform: String?
    /// The requester's network (IPv4 /24 or IPv6 /48, e.g. `203.0.113.0/24`), shown to the approving device.
    public var network: String?
    /// Who approved it and what their session proved, for the requester's completion; nil until approved.
    public var approvedBy: Approver?

    /// The approving session, as it was when it approved.
    public struct Approver: Codable, Sendable, Equatable {
        /// The approving session.
        public var sessionID: UUID
        /// That session's `auth_time`: the last interactive sign-in that met every factor.
        public var authTime: Date
        /// That session's `amr`.
        public var amr: [String]
        /// The user's credential version at approval: a reset or change before completion refuses it.
        public var credentialVersion: Int

        /// Creates an approver.
        public init(sessionID: UUID, authTime: Date, amr: [String], credentialVersion: Int) {
            self.sessionID = sessionID
            self.authTime = authTime
            self.amr = amr
            self.credentialVersion = credentialVersion
        }

        enum CodingKeys: String, CodingKey {
            case sessionID = "session_id", authTime = "auth_time", amr, credentialVersion = "credential_version"
        }
    }

    /// Creates a record.
    package init(
        id: String, kind: String, userID: UUID?, matchCodeDigest: String, matchAttempts: Int, state: State, createdAt: Date,
        expiresAt: Date, completeBy: Date?, deviceName: String?, payload: [String: JSONValue], platform: String? = nil, network: String? = nil
    ) {
        self.platform = platform
        self.network = network
        self.id = id
        self.kind = kind
        self.userID = userID
        self.matchCodeDigest = matchCodeDigest
        self.matchAttempts = matchAttempts
        self.state = state
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.completeBy = completeBy
        self.deviceName = deviceName
        self.payload = payload
    }

    /// Stored states. `expired` is not stored: it is a pending request past its time.
    package enum State: String, Codable, Sendable {
        case pending, approved, denied, completed
    }

    /// What a client sees.
    public enum Status: String, Codable, Sendable {
        /// Waiting for the other device.
        case pending
        /// Approved; the requester may complete it.
        case approved
        /// Denied on the other device.
        case denied
        /// Not answered, or not completed, in time.
        case expired
        /// Used by the requester.
        case completed
    }

    /// The status at `now`: pending and approved requests expire; the others are final.
    public func status(at now: Date) -> Status {
        switch state {
        case .pending: now >= expiresAt ? .expired : .pending
        case .approved: now >= (completeBy ?? expiresAt) ? .expired : .approved
        case .denied: .denied
        case .completed: .completed
        }
    }

    /// The expiry that applies to the current status.
    public var currentExpiry: Date { state == .approved ? (completeBy ?? expiresAt) : expiresAt }

    package enum CodingKeys: String, CodingKey {
        case id, kind, userID = "user_id", matchCodeDigest = "match_code_digest", matchAttempts = "match_attempts", state
        case createdAt = "created_at", expiresAt = "expires_at", completeBy = "complete_by", deviceName = "device_name", payload
        case platform, network, approvedBy = "approved_by"
    }
}
