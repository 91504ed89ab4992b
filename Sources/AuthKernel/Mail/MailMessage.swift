/// An email to send: a code and what it is for, already worded.
public struct MailMessage: Sendable, Equatable {
    /// Recipient address.
    public var to: String
    /// Subject line.
    public var subject: String
    /// Plain-text body.
    public var text: String
    /// The one-time code the message carries, if any (the outbox records it for tests and tooling).
    public var code: String?

    /// Creates a message.
    public init(to: String, subject: String, text: String, code: String? = nil) {
        self.to = to
        self.subject = subject
        self.text = text
        self.code = code
    }
}
