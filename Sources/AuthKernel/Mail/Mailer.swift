public import Logging

/// Sends mail through the configured transport and logs the outcome without the content.
public struct Mailer: Sendable {
    /// The transport.
    public let transport: any MailTransport
    /// The `From` header.
    public let from: String
    let logger: Logger

    /// Creates a mailer.
    public init(transport: any MailTransport, from: String, logger: Logger) {
        self.transport = transport
        self.from = from
        self.logger = logger
    }

    /// Sends a message. Delivery failures are logged and rethrown.
    public func send(_ message: MailMessage) async throws {
        do {
            try await transport.send(message, from: from)
        } catch {
            logger.error("mail delivery failed", metadata: ["error": "\(error)"])
            throw error
        }
    }
}
