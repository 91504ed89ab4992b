/// An email to send, already worded (see ``MailTemplates``).
public struct MailMessage: Sendable, Equatable, Codable {
    /// Recipient address.
    public var to: String
    /// Subject line.
    public var subject: String
    /// Plain-text body.
    public var text: String
    /// HTML body (sent as the second part of multipart/alternative), if any.
    public var html: String?
    /// The one-time code the message carries, if any (the outbox records it for tests and tooling).
    public var code: String?

    /// Creates a message.
    public init(to: String, subject: String, text: String, html: String? = nil, code: String? = nil) {
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.code = code
    }
}
