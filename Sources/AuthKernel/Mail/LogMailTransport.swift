package import Logging

/// The `log` transport (the default): writes each message to the server log, for development.
///
/// This is the one place a code reaches the log, because the operator asked for exactly that;
/// production deployments use `outbox`, `smtp` or `sendmail`.
package struct LogMailTransport: MailTransport {
    let logger: Logger

    /// Creates the transport.
    package init(logger: Logger) { self.logger = logger }

    package func send(_ message: MailMessage, from: String) async throws {
        logger.notice(
            "mail (log transport, for development)",
            metadata: ["mail.to": "\(message.to)", "mail.subject": "\(message.subject)", "mail.text": "\(message.text)"]
        )
    }
}
