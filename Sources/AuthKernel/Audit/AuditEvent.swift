/// One security event as a line of `DATA/audit.jsonl`. Identifiers only: never a token, code, PIN or password.
public struct AuditEvent: Codable, Sendable, Equatable {
    /// RFC 3339 time.
    public var time: String
    /// What happened: `sign_in`, `sign_in_failed`, `refresh_reuse`, `logout`, `password_changed`,
    /// `pin_changed`, `reset_requested`, `reset_approved`, `reset_denied`, `reset_completed`,
    /// `lockout`, `account_deleted`, `admin`.
    public var event: String
    /// The provider involved, e.g. `email`.
    public var provider: String?
    /// The user, when known.
    public var userID: String?
    /// The email or username tried, when the event is about one and the user may not exist.
    public var account: String?
    /// The client's address.
    public var ip: String?
    /// The device name the client sent.
    public var device: String?
    /// Why it failed (the contract's error code), or which admin command ran.
    public var reason: String?
    /// The request, to find its log lines.
    public var requestID: String?

    /// Creates an event.
    public init(
        time: String, event: String, provider: String? = nil, userID: String? = nil, account: String? = nil,
        ip: String? = nil, device: String? = nil, reason: String? = nil, requestID: String? = nil
    ) {
        self.time = time
        self.event = event
        self.provider = provider
        self.userID = userID
        self.account = account
        self.ip = ip
        self.device = device
        self.reason = reason
        self.requestID = requestID
    }

    enum CodingKeys: String, CodingKey {
        case time, event, provider, userID = "user_id", account, ip, device, reason, requestID = "request_id"
    }
}
