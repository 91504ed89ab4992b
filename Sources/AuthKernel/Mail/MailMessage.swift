/// An email to send, already worded (see `MailTemplates`).
package struct MailMessage: Sendable, Equatable, Codable {
    /// Recipient address.
    package var to: String
    /// The language it is written in (`Content-Language`), if known.
    package var language: String?
    /// Subject line.
    package var subject: String
    /// Plain-text body.
    package var text: String
    /// HTML body (sent as the second part of multipart/alternative), if any.
    package var html: String?
    /// The one-time code the message carries, if any (the outbox records it for tooling; tests read
    /// the text, as a person does).
    package var code: String?
    /// The template it was rendered from (`PROVIDER.NAME`), if any.
    package var template: String?

    /// Creates a message.
    package init(to: String, language: String? = nil, subject: String, text: String, html: String? = nil, code: String? = nil, template: String? = nil) {
        self.to = to
        self.language = language
        self.subject = subject
        self.text = text
        self.html = html
        self.code = code
        self.template = template
    }
}
