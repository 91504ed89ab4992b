public import AuthKernel

/// The `pin` configuration section.
public struct PINSettings: Sendable {
    /// Consecutive wrong PINs that lock the user's PIN sign-in (`max_attempts`, default 5).
    public var maxAttempts: Int
    /// First lockout in seconds (`lockout`, default 300); each further lockout doubles it, up to a day.
    public var lockout: Int
    /// PIN attempts per client IP across users (`attempts_per_ip`, default 20 per 10 minutes).
    public var attemptsPerIP: RateLimitRule
    /// Anonymous sign-ups per client IP (`anonymous_per_ip`, default 30 per hour).
    public var anonymousPerIP: RateLimitRule
    /// Seconds an anonymous user with nothing linked (no PIN, no email) is kept after its last session
    /// ended and its last change (`anonymous_ttl`, default 30 days): no one can sign in as it again.
    public var anonymousTTL: Int

    /// Longest lockout, seconds.
    public static let maxLockout = 86_400

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        maxAttempts = try section.int("max_attempts", default: 5, in: 1...100)
        lockout = try section.seconds("lockout", default: 300, max: Self.maxLockout)
        attemptsPerIP = try section.rule("attempts_per_ip", default: RateLimitRule(limit: 20, window: 600))
        anonymousPerIP = try section.rule("anonymous_per_ip", default: RateLimitRule(limit: 30, window: 3600))
        anonymousTTL = try section.seconds("anonymous_ttl", default: 30 * 86_400)
    }
}

extension PINProvider {
    /// The `pin` section's keys.
    public static let settings = [
        Setting("max_attempts", .integer, default: "5", "Consecutive wrong PINs (at sign-in or as current_pin) that lock the user's PIN sign-in."),
        Setting("lockout", .seconds, default: "300", "The first lock; each further one doubles it, at most a day. A success resets both."),
        Setting.rateLimit("attempts_per_ip", default: RateLimitRule(limit: 20, window: 600), "PIN attempts per client network across all users."),
        Setting.rateLimit("anonymous_per_ip", default: RateLimitRule(limit: 30, window: 3600), "Anonymous sign-ups per client network."),
        Setting("anonymous_ttl", .seconds, default: "2592000", "An anonymous user with nothing linked is deleted this long after its last session ended."),
    ]
}

extension PINProvider {
    /// What the PIN provider records beyond the kernel's events.
    public static let auditEvents = [AuditEventDeclaration("pin_changed", "A PIN was set or changed.")]
}
