/// One event under one rule for one key: what a ``RateLimiter`` consumes several of at
/// once, all or none.
public struct RateLimitCharge: Sendable, Equatable {
    /// The rule (its limit and window).
    public var rule: RateLimitRule
    /// What is counted: a network, an address, a session, prefixed with the provider's id.
    public var key: String

    /// A charge of one event under `rule` for `key`.
    public init(_ rule: RateLimitRule, key: String) {
        self.rule = rule
        self.key = key
    }
}
