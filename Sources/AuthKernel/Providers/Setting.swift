/// One key of a provider's configuration section, as the provider declares it: what `authd check`
/// lists, what docs/configuration.md is generated from, and the only keys its initialiser may read.
///
/// ```swift
/// public static let settings = [
///     Setting("ttl", .seconds, default: "900", "How long a mailed link works."),
///     Setting("token_signing_value", .string, default: "none", secret: true, "What signs the provider's tokens."),
///     Setting.rateLimit("sends_per_email", default: RateLimitRule(limit: 1, window: 60), "Links mailed to one address."),
/// ]
/// ```
///
/// A setting declared `secret` (a password, a key, a token) is shown as `[redacted]` wherever
/// authd would show its value: `authd check`, `authd settings`, the console and the log. A key
/// whose name holds `secret`, `password`, `api_key` or `private_key` is treated so without the flag;
/// one that ends in `_file` names the file a secret is read from, and its path is shown, never the
/// file's contents.
public struct Setting: Sendable, Equatable {
    /// What a key holds.
    public enum Kind: String, Sendable, Equatable {
        /// Whole seconds.
        case seconds
        /// A whole number.
        case integer
        /// `true` or `false`.
        case boolean
        /// A string.
        case string
        /// An array of strings.
        case strings
        /// A rate-limit rule, `{"limit": N, "window": SECONDS}`.
        case rateLimit = "rate limit"
        /// An object whose keys are declared as settings of their own (`argon2.ops_limit`).
        case object
        /// An array of objects.
        case objects
    }

    /// The key, relative to the provider's section; a nested one is dotted (`argon2.ops_limit`).
    public var key: String
    /// What it holds.
    public var kind: Kind
    /// Its default as a person reads it (`300`, `none`, `[]`, `10 per 3600 s`).
    public var defaultValue: String
    /// One line: what it changes.
    public var summary: String
    /// Whether its value is a secret that nothing may show (`secret: true`).
    public var isSecret: Bool

    /// A setting; `secret: true` declares its value a secret, shown as `[redacted]` everywhere.
    public init(_ key: String, _ kind: Kind, default defaultValue: String, secret: Bool = false, _ summary: String) {
        self.key = key
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
        self.isSecret = secret
    }

    /// A rate-limit rule the operator can change; its default shown as `LIMIT per WINDOW s`.
    public static func rateLimit(_ key: String, default rule: RateLimitRule, _ summary: String) -> Setting {
        Setting(key, .rateLimit, default: "\(rule.limit) per \(rule.window) s", summary)
    }
}
