/// The rules for one kind of one-time code.
public struct CodePolicy: Sendable {
    /// Lifetime of a code, seconds.
    public var ttl: Int
    /// Minimum time between two sends to the same key, seconds.
    public var resendInterval: Int
    /// Wrong tries that kill a code.
    public var maxAttempts: Int
    /// Wrong tries allowed per key within ``failureWindow``, across codes (a resend does not reset them).
    public var maxFailures: Int
    /// Window for ``maxFailures``, seconds.
    public var failureWindow: Int
    /// Number of digits.
    public var digits: Int

    /// Creates a policy.
    public init(ttl: Int, resendInterval: Int, maxAttempts: Int, maxFailures: Int, failureWindow: Int, digits: Int = 6) {
        self.ttl = ttl
        self.resendInterval = resendInterval
        self.maxAttempts = maxAttempts
        self.maxFailures = maxFailures
        self.failureWindow = failureWindow
        self.digits = digits
    }
}
