/// One security event as a line of `DATA/audit.jsonl`. Identifiers only: never a token, code, PIN or password.
package struct AuditEvent: Codable, Sendable, Equatable {
    /// RFC 3339 time.
    package var time: String
    /// What happened: `sign_in`, `sign_in_failed`, `refresh_reuse`, `logout`, `password_changed`,
    /// `pin_changed`, `reset_requested`, `reset_approved`, `reset_denied`, `reset_completed`,
    /// `lockout`, `account_deleted`, `admin`.
    package var event: String
    /// The provider involved, e.g. `email`.
    package var provider: String?
    /// The user, when known.
    package var userID: String?
    /// The email or username tried, when the event is about one and the user may not exist.
    package var account: String?
    /// The client's address.
    package var ip: String?
    /// The device name the client sent.
    package var device: String?
    /// Why it failed (the contract's error code), or which admin command ran.
    package var reason: String?
    /// The request, to find its log lines.
    package var requestID: String?

    /// Creates an event.
    package init(
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
