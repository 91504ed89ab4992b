public import AuthKernel

/// How anonymous sign-in behaves: the `anonymous` configuration section, or the `pin` section's
/// `anonymous_per_ip` and `anonymous_ttl` when the pin provider brings anonymous sign-in along.
public struct AnonymousSettings: Sendable {
    /// Anonymous sign-ups per client IP (`sign_ups_per_ip`, default 30 per hour).
    public var signUpsPerIP: RateLimitRule
    /// Seconds an anonymous user with nothing linked (no PIN, no email) is kept after its last
    /// session ended and its last change (`ttl`, default 30 days): no one can sign in as it again.
    public var ttl: Int

    /// The defaults.
    public static let defaultSignUpsPerIP = RateLimitRule(limit: 30, window: 3600)
    /// Thirty days.
    public static let defaultTTL = 30 * 86_400

    /// Settings with these values.
    public init(signUpsPerIP: RateLimitRule = Self.defaultSignUpsPerIP, ttl: Int = Self.defaultTTL) {
        self.signUpsPerIP = signUpsPerIP
        self.ttl = ttl
    }

    /// Reads the `anonymous` section.
    public init(_ section: inout ConfigSection) throws {
        signUpsPerIP = try section.rule("sign_ups_per_ip", default: Self.defaultSignUpsPerIP)
        ttl = try section.seconds("ttl", default: Self.defaultTTL)
    }
}

extension AnonymousProvider {
    /// The `anonymous` section's keys.
    public static let settings = [
        Setting.rateLimit("sign_ups_per_ip", default: AnonymousSettings.defaultSignUpsPerIP, "Anonymous sign-ups per client network."),
        Setting("ttl", .seconds, default: "2592000", "An anonymous user with nothing linked is deleted this long after its last session ended."),
    ]
}
