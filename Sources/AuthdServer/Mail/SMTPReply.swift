import AuthKernel
/// One SMTP reply: a three-digit code and its lines (several for `250-…` continuations).
struct SMTPReply: Sendable, CustomStringConvertible {
    var code: Int
    var lines: [String]
    /// Which plaintext/TLS phase of the connection it arrived in (see ``SMTPReplyHandler/discardReceived()``).
    var phase = 0

    var isPositive: Bool { (200..<400).contains(code) }
    var description: String { lines.map { "\(code) \(LogSafe.text($0))" }.joined(separator: " | ") }

    /// The error this reply means when it was not expected: 4xx retries, 5xx does not.
    var failure: MailError {
        (400..<500).contains(code) ? .transient("server said \(self)") : .permanent("server said \(self)")
    }
}
