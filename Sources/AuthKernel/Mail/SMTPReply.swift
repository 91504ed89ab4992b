/// One SMTP reply: a three-digit code and its lines (several for `250-…` continuations).
struct SMTPReply: Sendable, CustomStringConvertible {
    var code: Int
    var lines: [String]

    var isPositive: Bool { (200..<400).contains(code) }
    var description: String { lines.map { "\(code) \($0)" }.joined(separator: " | ") }

    /// The error this reply means when it was not expected: 4xx retries, 5xx does not.
    var failure: MailError {
        (400..<500).contains(code) ? .transient("server said \(self)") : .permanent("server said \(self)")
    }
}
