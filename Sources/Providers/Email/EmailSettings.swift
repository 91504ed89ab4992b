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

extension EmailProvider {
    /// The `email` section's keys.
    public static let settings = [
        Setting("code_ttl", .seconds, default: "300", "How long a mailed code works (at most a day)."),
        Setting("resend_interval", .seconds, default: "60", "One send or resend per address per this many seconds (429 with retry_after); 0 turns it off."),
        Setting("max_attempts", .integer, default: "5", "Wrong tries that end a code."),
        Setting("max_failures", .integer, default: "30", "Wrong codes allowed per address within failure_window, across resends."),
        Setting("failure_window", .seconds, default: "3600", "The window of max_failures."),
        Setting.rateLimit("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600), "Codes mailed per client network."),
        Setting.rateLimit("verifies_per_ip", default: RateLimitRule(limit: 60, window: 600), "Code checks per client network, so one client cannot sweep many addresses."),
        Setting.rateLimit(
            "attempts_per_client", default: RateLimitRule(limit: 10, window: 3600),
            "Code checks one client network may make for one address: a stranger spends these long before the owner is locked out."),
    ]
}
