import AuthStorage
import Synchronization

/// Where a ``RateLimiter`` keeps its GCRA state: one theoretical arrival time (TAT) per key.
///
/// ``take(key:now:interval:tolerance:)`` must be atomic per key: N concurrent takes against a limit
/// of 1 let exactly one through, across every process that shares the counters.
package protocol RateLimitCounters: Sendable {
    /// Records one event for `key` if `max(tat, now) - tolerance <= now`, moving its TAT to
    /// `max(tat, now) + interval`. Times are seconds since 1970.
    /// - Returns: nil when allowed, otherwise the whole seconds to wait (at least 1).
    func take(key: String, now: Double, interval: Double, tolerance: Double) async throws -> Int?
    /// Records one event under every take, or under none: when one refuses, nothing moves, so a
    /// refusal by a narrow rule does not spend a wide one. Atomic like ``take(key:now:interval:tolerance:)``;
    /// a key named twice counts twice.
    /// - Returns: nil when all allowed, otherwise the longest wait among the refusals.
    func takeAll(_ takes: [CounterTake], now: Double) async throws -> Int?
    /// Forgets one key.
    func remove(key: String) async throws
    /// Forgets every key (a reload: a count under one rule means nothing under another).
    func removeAll() async throws
    /// Drops keys whose TAT is before `now` (they would start afresh anyway).
    func purge(before now: Double) async throws
    /// Paces the polls of one device code (RFC 8628): records a poll of `key` at `now` and tells
    /// whether it came sooner than the interval, which then grows by 5 seconds for the polls that
    /// follow (`slow_down`). The first poll starts at `interval`. Atomic per key, like ``take(key:now:interval:tolerance:)``.
    func pace(key: String, now: Double, interval: Double) async throws -> Bool
}

/// What ``RateLimitCounters/apply(_:to:now:)`` decided.
package enum TakeOutcome: Sendable, Equatable {
    /// Every take allowed: the keys' new TATs.
    case allowed([String: Double])
    /// At least one refused: the longest wait, in whole seconds.
    case refused(wait: Int)
}

/// One rule's event for ``RateLimitCounters/takeAll(_:now:)``.
package struct CounterTake: Sendable, Equatable {
    /// The counter's key.
    package var key: String
    /// Seconds between events (`window / limit`).
    package var interval: Double
    /// How far ahead the TAT may run (`window - interval`): the burst.
    package var tolerance: Double

    /// A take of one event.
    package init(key: String, interval: Double, tolerance: Double) {
        self.key = key
        self.interval = interval
        self.tolerance = tolerance
    }
}

extension RateLimitCounters {
    /// Applies `takes` to the TATs in `arrivals` (missing keys are fresh) all or nothing: the new
    /// TATs when every take is allowed, otherwise the longest wait. What both backends compute
    /// once they hold the keys.
    package static func apply(_ takes: [CounterTake], to arrivals: [String: Double], now: Double) -> TakeOutcome {
        var next = arrivals
        var wait: Int?
        for take in takes {
            let tat = max(next[take.key] ?? now, now)
            let allowAt = tat - take.tolerance
            if allowAt > now {
                wait = max(wait ?? 0, Self.wait(until: allowAt, now: now))
            } else {
                next[take.key] = tat + take.interval
            }
        }
        if let wait { return .refused(wait: wait) }
        return .allowed(next)
    }

    /// The answer for a refused take: whole seconds until `allowAt`, at least 1.
    package static func wait(until allowAt: Double, now: Double) -> Int { max(1, Int((allowAt - now).rounded(.up))) }
}

/// Counters in this process's memory: exact within one instance, forgotten on restart.
///
/// Split into shards, each under its own lock, so concurrent checks of different keys rarely wait
/// for each other. Bounded by entries and bytes: a key longer than ``maxKeyBytes`` is kept as its
/// SHA-256, and each shard drops keys whose TAT has passed when it has doubled since its last
/// clean-up (amortised O(1) per check). If it is still over its share of ``capacity`` after that,
/// the keys closest to being forgiven anyway (the earliest TATs) go first.
package final class MemoryRateLimitCounters: RateLimitCounters {
    private struct Shard {
        var arrivals: [String: Double] = [:]
        /// Entry count at which the next clean-up runs.
        var pruneAt = 1024
        /// Entries the clean-ups have looked at, in all.
        var examined = 0
    }
    private final class Lock: Sendable {
        let shard = Mutex(Shard())
    }
    private let shards: [Lock]
    private let perShard: Int
    private let polls = PollPacing()

    /// Keys longer than this (in bytes) are stored as their SHA-256.
    package static let maxKeyBytes = 96
    /// Entries kept at most, across shards.
    package let capacity: Int

    /// Creates empty counters holding at most `capacity` keys.
    package init(capacity: Int = 250_000, shards: Int = 16) {
        self.capacity = capacity
        self.shards = (0..<max(1, shards)).map { _ in Lock() }
        perShard = max(16, capacity / max(1, shards))
    }

    private func lock(for key: String) -> Lock { shards[shardIndex(for: key)] }

    static func stored(_ key: String) -> String {
        key.utf8.count <= maxKeyBytes ? key : "sha256:" + Hex.encode(SHA256.hash(key))
    }

    package func pace(key: String, now: Double, interval: Double) -> Bool {
        polls.tooSoon(key, now: now, interval: interval)
    }

    package func take(key: String, now: Double, interval: Double, tolerance: Double) -> Int? {
        let key = Self.stored(key)
        let perShard = self.perShard
        return lock(for: key).shard.withLock { shard -> Int? in
            let tat = max(shard.arrivals[key] ?? now, now)
            let allowAt = tat - tolerance
            if allowAt > now { return Self.wait(until: allowAt, now: now) }
            if shard.arrivals[key] == nil, shard.arrivals.count >= shard.pruneAt { Self.prune(&shard, now: now, limit: perShard) }
            shard.arrivals[key] = tat + interval
            return nil
        }
    }

    package func takeAll(_ takes: [CounterTake], now: Double) -> Int? {
        let perShard = self.perShard
        let takes = takes.map { CounterTake(key: Self.stored($0.key), interval: $0.interval, tolerance: $0.tolerance) }
        // Shards locked in index order, so two multi-takes never wait for each other in a cycle.
        let indexes = Array(Set(takes.map { shardIndex(for: $0.key) })).sorted()
        return locked(indexes[...], held: [:]) { held -> Int? in
            var arrivals: [String: Double] = [:]
            for take in takes { arrivals[take.key] = held[shardIndex(for: take.key)]!.pointee.arrivals[take.key] }
            switch Self.apply(takes, to: arrivals, now: now) {
            case .refused(let wait): return wait
            case .allowed(let next):
                for (key, tat) in next {
                    let shard = held[shardIndex(for: key)]!
                    if shard.pointee.arrivals[key] == nil, shard.pointee.arrivals.count >= shard.pointee.pruneAt {
                        Self.prune(&shard.pointee, now: now, limit: perShard)
                    }
                    shard.pointee.arrivals[key] = tat
                }
                return nil
            }
        }
    }

    private func shardIndex(for key: String) -> Int { Int(UInt(bitPattern: key.hashValue) % UInt(shards.count)) }

    /// Holds the shards at `indexes` (and those already `held`) while `body` runs.
    private func locked(
        _ indexes: ArraySlice<Int>, held: [Int: UnsafeMutablePointer<Shard>], _ body: ([Int: UnsafeMutablePointer<Shard>]) -> Int?
    ) -> Int? {
        guard let first = indexes.first else { return body(held) }
        return shards[first].shard.withLock { shard -> Int? in
            withUnsafeMutablePointer(to: &shard) { pointer -> Int? in
                var held = held
                held[first] = pointer
                return locked(indexes.dropFirst(), held: held, body)
            }
        }
    }

    private static func prune(_ shard: inout Shard, now: Double, limit: Int) {
        shard.examined += shard.arrivals.count
        shard.arrivals = shard.arrivals.filter { $0.value > now }
        if shard.arrivals.count >= limit {
            shard.examined += shard.arrivals.count
            // Still full of live keys: forget the tenth nearest to expiry, whose limits bind least.
            let drop = shard.arrivals.sorted { $0.value < $1.value }.prefix(max(1, limit / 10))
            for (key, _) in drop { shard.arrivals[key] = nil }
        }
        shard.pruneAt = min(limit, max(1024, shard.arrivals.count * 2))
    }

    package func remove(key: String) {
        let key = Self.stored(key)
        _ = lock(for: key).shard.withLock { $0.arrivals.removeValue(forKey: key) }
    }

    package func removeAll() { for lock in shards { lock.shard.withLock { $0 = Shard() } } }

    package func purge(before now: Double) {
        for lock in shards { lock.shard.withLock { $0.arrivals = $0.arrivals.filter { $1 > now } } }
    }

    /// Keys held now.
    package var count: Int { shards.reduce(0) { total, lock in total + lock.shard.withLock { $0.arrivals.count } } }

    /// Entries the clean-ups of ``take(key:now:interval:tolerance:)`` have looked at since these
    /// counters were made: the work that must stay amortised O(1) per take, however many keys there are.
    package var entriesExamined: Int { shards.reduce(0) { total, lock in total + lock.shard.withLock { $0.examined } } }
}
