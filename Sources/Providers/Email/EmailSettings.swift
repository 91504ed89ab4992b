public import AuthKernel

/// The `email` configuration section.
public struct EmailSettings: Sendable {
    /// Code rules: `code_ttl` (300), `resend_interval` (60), `max_attempts` (5),
    /// `max_failures` (30) wrong codes per email per `failure_window` (3600) across resends.
    public var codes: CodePolicy
    /// Codes sent per client IP (`sends_per_ip`, default 20 per hour).
    public var sendsPerIP: RateLimitRule
    /// Verify attempts per client IP (`verifies_per_ip`, default 60 per 10 minutes), so one client cannot sweep many inboxes.
    public var verifiesPerIP: RateLimitRule
    /// Verify attempts one client may make for one email (`attempts_per_client`, default 10 per hour):
    /// a stranger spends this before the email's own `max_failures`, which would lock its owner out.
    public var attemptsPerClient: RateLimitRule

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        codes = CodePolicy(
            ttl: try section.seconds("code_ttl", default: 300, max: 86_400),
            resendInterval: try section.int("resend_interval", default: 60, in: 0...86_400),
            maxAttempts: try section.int("max_attempts", default: 5, in: 1...100),
            maxFailures: try section.int("max_failures", default: 30, in: 1...10_000),
            failureWindow: try section.seconds("failure_window", default: 3600, max: 86_400)
        )
        sendsPerIP = try section.rule("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600))
        verifiesPerIP = try section.rule("verifies_per_ip", default: RateLimitRule(limit: 60, window: 600))
        attemptsPerClient = try section.rule("attempts_per_client", default: RateLimitRule(limit: 10, window: 3600))
    }
}
