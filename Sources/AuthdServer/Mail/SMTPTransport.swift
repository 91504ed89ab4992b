import AuthKernel
/// The `smtp` transport.
struct SMTPTransport: MailTransport {
    let client: SMTPClient

    /// Creates the transport.
    init(settings: SMTPSettings) { client = SMTPClient(settings: settings) }

    func send(_ message: MailMessage, from: String) async throws {
        let composed = try MailComposer.compose(message, from: from)
        let sender = try MailAddress(parsing: from, field: "From")
        let recipient = try MailAddress(parsing: message.to, field: "To")
        try await client.send(composed, from: sender.address, to: recipient.address)
    }
}

// It holds the SMTP password: a log line or a `dump` shows its name only (contract §17).
extension SMTPTransport: RedactedDescription {}
