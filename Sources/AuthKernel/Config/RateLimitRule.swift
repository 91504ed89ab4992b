package import AuthStorage

/// At most `limit` events per `window` seconds.
public struct RateLimitRule: Sendable, Equatable {
    /// Events allowed per window.
    public var limit: Int
    /// Window length in seconds.
    public var window: Int
    /// Where the rule lives in the configuration (`email.sends_per_ip`), so a reload (SIGHUP) can
    /// change it; nil for rules that are not configurable.
    package var name: String?
    /// The built-in value, which a reload goes back to when the key is removed.
    package var builtIn: Limits?

    /// A limit and window without a name.
    package struct Limits: Sendable, Equatable {
        /// Events allowed per window.
        package var limit: Int
        /// Window length in seconds.
        package var window: Int
        /// Creates limits.
        package init(limit: Int, window: Int) {
            self.limit = limit
            self.window = window
        }
    }

    /// Creates a rule: at most `limit` events per `window` seconds.
    public init(limit: Int, window: Int) {
        self.limit = limit
        self.window = window
    }

    /// Two rules are equal when they allow the same (where they come from does not matter).
    public static func == (a: Self, b: Self) -> Bool { a.limit == b.limit && a.window == b.window }

    /// Reads `{"limit": N, "window": SECONDS}`; nil when `value` is not a valid rule.
    package static func parse(_ value: JSONValue?) -> Limits? {
        guard case .object(let o) = value, case .number(let l) = o["limit"], case .number(let w) = o["window"],
            o.count == 2, l == l.rounded(), w == w.rounded(), (1...1_000_000).contains(l), w >= 1, w <= 10 * 365 * 86_400
        else { return nil }
        return Limits(limit: Int(l), window: Int(w))
    }
}

extension ConfigSection {
    /// Reads a rate-limit rule written as `{"limit": N, "window": SECONDS}`.
    public mutating func rule(_ key: String, default defaultValue: RateLimitRule) throws -> RateLimitRule {
        try checkDeclared(key)
        guard contains(key) else {
            skip(key)
            var rule = defaultValue
            rule.name = path.isEmpty ? key : "\(path).\(key)"
            rule.builtIn = .init(limit: defaultValue.limit, window: defaultValue.window)
            note(key, .object(["limit": .number(Double(rule.limit)), "window": .number(Double(rule.window))]))
            return rule
        }
        var r = try section(key)
        var rule = RateLimitRule(
            limit: try r.int("limit", default: defaultValue.limit, in: 1...1_000_000),
            window: try r.seconds("window", default: defaultValue.window)
        )
        try r.rejectUnknownKeys()
        note(key, .object(["limit": .number(Double(rule.limit)), "window": .number(Double(rule.window))]))
        rule.name = path.isEmpty ? key : "\(path).\(key)"
        rule.builtIn = .init(limit: defaultValue.limit, window: defaultValue.window)
        return rule
    }
}
