/// Delivers mail. authd ships `log` and `outbox`; a transport is one small type.
package protocol MailTransport: Sendable {
    /// Delivers one message (with the configured `From`).
    func send(_ message: MailMessage, from: String) async throws
}
