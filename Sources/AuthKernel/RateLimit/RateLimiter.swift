import AuthStorage
import Metrics
import Foundation
import Synchronization

/// A keyed rate limiter using GCRA (the generic cell rate algorithm): exact, O(1) per check, and
/// able to say precisely how long to wait.
///
/// Each key remembers one instant, its theoretical arrival time. A rule of `limit` events per
/// `window` spaces events `window / limit` apart and allows a burst of `limit`. Checks run under one
/// lock, so N concurrent requests against a limit of 1 let exactly one through.
///
/// Counters live in a `RateLimitCounters`: in memory by default (a restart forgives), or in the
/// database several instances share, so a limit holds across all of them. Limits that must survive
/// restarts (code attempts, resend intervals) are kept in the store by the services that own them.
public final class RateLimiter: Sendable {
    private let counters: any RateLimitCounters
    private let clock: any AuthClock

    /// The configuration read at the last reload, and the rules found in it so far, by name.
    private let reloaded = Mutex<(root: [String: JSONValue]?, rules: [String: RateLimitRule])>((nil, [:]))

    /// Creates a limiter reading time from `clock`, counting in `counters`.
    package init(clock: any AuthClock, counters: any RateLimitCounters = MemoryRateLimitCounters()) {
        self.clock = clock
        self.counters = counters
    }

    /// Takes the rules of a re-read configuration file (SIGHUP): from now on a named rule is the
    /// value at its path in `root`, or its built-in value where the file no longer sets it.
    /// When the limits changed, counters start over, as after a restart: a count kept under one rule
    /// means nothing under another (shared counters start over for every instance).
    package func reload(root: [String: JSONValue], clearCounters: Bool) async {
        reloaded.withLock { $0 = (root, [:]) }
        if clearCounters { do { try await counters.removeAll() } catch {} }
    }

    /// The rule as the last reload says (the rule itself when there has been none).
    func effective(_ rule: RateLimitRule) -> RateLimitRule {
        guard let name = rule.name else { return rule }
        return reloaded.withLock { state -> RateLimitRule in
            guard let root = state.root else { return rule }
            if let known = state.rules[name] { return known }
            var value: JSONValue? = .object(root)
            for part in name.split(separator: ".") {
                guard case .object(let o) = value else { value = nil; break }
                value = o[String(part)]
            }
            // Set and valid: the new value. Removed: the built-in one. Set but invalid: unchanged.
            var current = rule
            if let limits = value == nil ? rule.builtIn : RateLimitRule.parse(value) {
                (current.limit, current.window) = (limits.limit, limits.window)
            }
            state.rules[name] = current
            return current
        }
    }

    /// Records one event for `key` under `rule` if allowed.
    /// - Returns: nil when allowed, otherwise the whole seconds to wait (at least 1).
    /// - Throws: `StoreError/unavailable` when shared counters cannot be reached.
    public func attempt(_ rule: RateLimitRule, key: String) async throws -> Int? {
        let rule = effective(rule)
        let interval = Double(rule.window) / Double(rule.limit)
        return try await counters.take(key: key, now: clock.now().timeIntervalSince1970, interval: interval, tolerance: Double(rule.window) - interval)
    }

    /// Records one event or throws 429 `RATE_LIMIT_EXCEEDED` with `retry_after` (503 when shared
    /// counters cannot be reached: a limit that cannot be checked is not waved through).
    public func consume(_ rule: RateLimitRule, key: String, message: String = "Too many requests. Try again later.") async throws(AuthError) {
        let wait: Int?
        do { wait = try await attempt(rule, key: key) } catch { throw AuthError.unavailable }
        if let wait {
            Self.rejections.increment()
            throw AuthError.rateLimited(retryAfter: wait, message: message)
        }
    }

    /// Records one event under each of `charges`, or under none when one of them refuses: a request
    /// that a narrow rule (one address from one network) refuses does not spend a wide one (the network).
    /// - Returns: nil when allowed, otherwise the longest wait among the refusals, in whole seconds.
    /// - Throws: `StoreError/unavailable` when shared counters cannot be reached.
    public func attempt(_ charges: [RateLimitCharge]) async throws -> Int? {
        let takes = charges.map { charge -> CounterTake in
            let rule = effective(charge.rule)
            let interval = Double(rule.window) / Double(rule.limit)
            return CounterTake(key: charge.key, interval: interval, tolerance: Double(rule.window) - interval)
        }
        return try await counters.takeAll(takes, now: clock.now().timeIntervalSince1970)
    }

    /// Records one event under every charge or throws 429 `RATE_LIMIT_EXCEEDED` with the longest
    /// `retry_after`, having spent none of them (503 when shared counters cannot be reached).
    ///
    /// ```swift
    /// try await kernel.rateLimiter.consume([
    ///     RateLimitCharge(settings.verifiesPerIP, key: "invite.verify.ip:\(context.clientKey)"),
    ///     RateLimitCharge(settings.attemptsPerCode, key: "invite.verify.code:\(code)"),
    /// ])
    /// ```
    public func consume(_ charges: [RateLimitCharge], message: String = "Too many requests. Try again later.") async throws(AuthError) {
        let wait: Int?
        do { wait = try await attempt(charges) } catch { throw AuthError.unavailable }
        if let wait {
            Self.rejections.increment()
            throw AuthError.rateLimited(retryAfter: wait, message: message)
        }
    }

    /// `authd_rate_limit_rejections_total`.
    static let rejections = Counter(label: "authd_rate_limit_rejections_total")

    /// Forgets a key (e.g. after a successful sign-in).
    /// Whether this poll of a device code came too soon (see ``RateLimitCounters/pace(key:now:interval:)``):
    /// kept with the counters, so instances sharing a database pace one code together.
    /// - Throws: `StoreError/unavailable` when shared counters cannot be reached.
    package func pacePoll(key: String, interval: Double) async throws -> Bool {
        try await counters.pace(key: key, now: clock.now().timeIntervalSince1970, interval: interval)
    }

    package func reset(key: String) async {
        do { try await counters.remove(key: key) } catch {}
    }

    /// Drops counters whose every event has left its window (the in-memory ones prune themselves).
    package func purge() async throws {
        try await counters.purge(before: clock.now().timeIntervalSince1970)
    }
}
