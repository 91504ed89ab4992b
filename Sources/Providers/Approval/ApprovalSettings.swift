public import AuthKernel

/// The `approval` configuration section (contract §15).
public struct ApprovalSettings: Sendable {
    /// Seconds a request waits for the approving device (`ttl`, default 120); an approved one has as long again to be collected.
    public var ttl: Int
    /// Seconds the new device waits between asks (`interval`, default 2).
    public var interval: Int
    /// Requests one identifier may have pending (`pending_per_identifier`, default 3), counted as
    /// starts per `ttl`, the longest a request stays pending, so known and unknown identifiers count alike.
    public var pendingPerIdentifier: Int
    /// Starts per identifier as typed, known or not (`starts_per_identifier`, default 10 per hour).
    public var startsPerIdentifier: RateLimitRule
    /// Starts per identifier from one client network (`starts_per_identifier_network`, default 3 per hour).
    public var startsPerIdentifierNetwork: RateLimitRule
    /// Starts per client network across identifiers (`starts_per_network`, default 30 per hour).
    public var startsPerNetwork: RateLimitRule
    /// Seconds a "not me" makes that network's requests for the user decoys (`not_me_block`, default 3600).
    public var notMeBlock: Int
    /// Seconds a "not me" stops pushes of the user's sign-in requests (`not_me_quiet`, default 86400).
    public var notMeQuiet: Int
    /// Whether a signed-in device's approval is offered as a second factor (`second_factor`, default true).
    public var secondFactor: Bool

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        ttl = try section.int("ttl", default: 120, in: 2...600)
        interval = try section.int("interval", default: 2, in: 1...30)
        pendingPerIdentifier = try section.int("pending_per_identifier", default: 3, in: 1...1000)
        startsPerIdentifier = try section.rule("starts_per_identifier", default: RateLimitRule(limit: 10, window: 3600))
        startsPerIdentifierNetwork = try section.rule("starts_per_identifier_network", default: RateLimitRule(limit: 3, window: 3600))
        startsPerNetwork = try section.rule("starts_per_network", default: RateLimitRule(limit: 30, window: 3600))
        notMeBlock = try section.seconds("not_me_block", default: 3600, max: 30 * 86_400)
        notMeQuiet = try section.seconds("not_me_quiet", default: 86_400, max: 30 * 86_400)
        secondFactor = try section.bool("second_factor", default: true)
    }

    /// The pending limit as a rule: `pending_per_identifier` starts per `ttl`.
    var pendingRule: RateLimitRule { RateLimitRule(limit: pendingPerIdentifier, window: ttl * pendingPerIdentifier) }
}

extension ApprovalProvider {
    /// The `approval` section's keys.
    public static let settings = [
        Setting("ttl", .seconds, default: "120", "How long a request waits for the other device (at most 600); an approved one has as long again to be collected."),
        Setting("interval", .seconds, default: "2", "How often the new device asks whether it was approved."),
        Setting(
            "pending_per_identifier", .integer, default: "3",
            "Requests one email or user name may have waiting, known or not (counted as starts per ttl)."),
        Setting.rateLimit("starts_per_identifier", default: RateLimitRule(limit: 10, window: 3600), "Requests per email or user name as typed, known or not."),
        Setting.rateLimit(
            "starts_per_identifier_network", default: RateLimitRule(limit: 3, window: 3600), "Requests per email or user name from one client network."),
        Setting.rateLimit("starts_per_network", default: RateLimitRule(limit: 30, window: 3600), "Requests per client network across all accounts."),
        Setting("not_me_block", .seconds, default: "3600", "After a \"not me\", that network's requests for the account are decoys for this long."),
        Setting("not_me_quiet", .seconds, default: "86400", "After a \"not me\", the account's sign-in requests push no alert for this long (still listed)."),
        Setting("second_factor", .boolean, default: "true", "Offer a signed-in device's approval as a second factor to accounts that have one."),
    ]
}
