public import AuthKernel

/// The `email` configuration section.
public struct EmailSettings: Sendable {
    /// Code rules: `code_ttl` (300), `resend_interval` (60), `max_attempts` (5),
    /// `max_failures` (10) wrong codes per email per `failure_window` (3600) across resends.
    public var codes: CodePolicy
    /// Codes sent per client IP (`sends_per_ip`, default 20 per hour).
    public var sendsPerIP: RateLimitRule
    /// Verify attempts per client IP (`verifies_per_ip`, default 60 per 10 minutes), so one client cannot sweep many inboxes.
    public var verifiesPerIP: RateLimitRule

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        codes = CodePolicy(
            ttl: try section.seconds("code_ttl", default: 300, max: 86_400),
            resendInterval: try section.int("resend_interval", default: 60, in: 0...86_400),
            maxAttempts: try section.int("max_attempts", default: 5, in: 1...100),
            maxFailures: try section.int("max_failures", default: 10, in: 1...10_000),
            failureWindow: try section.seconds("failure_window", default: 3600, max: 86_400)
        )
        sendsPerIP = try section.rule("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600))
        verifiesPerIP = try section.rule("verifies_per_ip", default: RateLimitRule(limit: 60, window: 600))
    }
}
