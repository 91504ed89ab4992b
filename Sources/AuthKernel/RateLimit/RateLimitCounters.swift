import Synchronization

/// Where a ``RateLimiter`` keeps its GCRA state: one theoretical arrival time (TAT) per key.
///
/// ``take(key:now:interval:tolerance:)`` must be atomic per key: N concurrent takes against a limit
/// of 1 let exactly one through, across every process that shares the counters.
public protocol RateLimitCounters: Sendable {
    /// Records one event for `key` if `max(tat, now) - tolerance <= now`, moving its TAT to
    /// `max(tat, now) + interval`. Times are seconds since 1970.
    /// - Returns: nil when allowed, otherwise the whole seconds to wait (at least 1).
    func take(key: String, now: Double, interval: Double, tolerance: Double) async throws -> Int?
    /// Forgets one key.
    func remove(key: String) async throws
    /// Forgets every key (a reload: a count under one rule means nothing under another).
    func removeAll() async throws
    /// Drops keys whose TAT is before `now` (they would start afresh anyway).
    func purge(before now: Double) async throws
}

extension RateLimitCounters {
    /// The answer for a refused take: whole seconds until `allowAt`, at least 1.
    public static func wait(until allowAt: Double, now: Double) -> Int { max(1, Int((allowAt - now).rounded(.up))) }
}

/// Counters in this process's memory, under one lock: exact within one instance, forgotten on restart.
public final class MemoryRateLimitCounters: RateLimitCounters {
    private let arrivals = Mutex<[String: Double]>([:])
    private static let pruneThreshold = 100_000

    /// Creates empty counters.
    public init() {}

    public func take(key: String, now: Double, interval: Double, tolerance: Double) -> Int? {
        arrivals.withLock { arrivals -> Int? in
            if arrivals.count > Self.pruneThreshold {
                arrivals = arrivals.filter { $0.value > now }
            }
            let tat = max(arrivals[key] ?? now, now)
            let allowAt = tat - tolerance
            if allowAt > now { return Self.wait(until: allowAt, now: now) }
            arrivals[key] = tat + interval
            return nil
        }
    }

    public func remove(key: String) { _ = arrivals.withLock { $0.removeValue(forKey: key) } }

    public func removeAll() { arrivals.withLock { $0 = [:] } }

    public func purge(before now: Double) { arrivals.withLock { $0 = $0.filter { $1 > now } } }
}
