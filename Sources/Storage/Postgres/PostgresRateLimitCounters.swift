import AuthStorage
package import AuthKernel
import Logging
import PostgresNIO

/// Rate-limit counters in the `rate_limits` table, so a limit holds across every instance.
///
/// One round trip per check (`authd_take`): the conditional upsert moves the key's TAT only when the
/// event is allowed, and the row lock it takes serialises concurrent checks of one key. The table is
/// `UNLOGGED`: a database crash or a failover resets the counters, which costs nothing lasting.
package struct PostgresRateLimitCounters: RateLimitCounters {
    let store: PostgresStore

    /// Counters in `store`'s database.
    package init(store: PostgresStore) { self.store = store }

    package func take(key: String, now: Double, interval: Double, tolerance: Double) async throws -> Int? {
        do {
            return try await take(Self.storable(key), now: now, interval: interval, tolerance: tolerance)
        } catch {
            throw store.unavailable(error)
        }
    }

    private func take(_ key: String, now: Double, interval: Double, tolerance: Double) async throws -> Int? {
        try await store.withConnection { connection -> Int? in
            let rows = try await connection.query(
                "SELECT authd_take(\(key), \(now), \(interval), \(tolerance))", logger: store.logger)
            // Refused: how long until the next event fits (the TAT only moves forward).
            for try await next in rows.decode(Double?.self) { return next.map { Self.wait(until: $0, now: now) } }
            return 1
        }
    }

    package func takeAll(_ takes: [CounterTake], now: Double) async throws -> Int? {
        let takes = takes.map { CounterTake(key: Self.storable($0.key), interval: $0.interval, tolerance: $0.tolerance) }
        let keys = Array(Set(takes.map(\.key))).sorted()
        let logger = store.logger
        do {
            return try await store.withConnection { connection in try await connection.transaction(logger: logger) { connection -> Int? in
                // Rows exist before they are locked, and are locked in key order: two multi-takes
                // sharing keys serialise instead of deadlocking.
                for key in keys {
                    try await connection.query("INSERT INTO rate_limits (key, tat) VALUES (\(key), 0) ON CONFLICT (key) DO NOTHING", logger: logger)
                }
                var arrivals: [String: Double] = [:]
                for try await (key, tat) in try await connection.query(
                    "SELECT key, tat FROM rate_limits WHERE key = ANY(\(keys)) ORDER BY key FOR UPDATE", logger: logger
                ).decode((String, Double).self) {
                    arrivals[key] = tat
                }
                switch Self.apply(takes, to: arrivals, now: now) {
                case .refused(let wait): return wait
                case .allowed(let next):
                    for (key, tat) in next where tat != arrivals[key] {
                        try await connection.query("UPDATE rate_limits SET tat = \(tat) WHERE key = \(key)", logger: logger)
                    }
                    return nil
                }
            } }
        } catch {
            throw store.unavailable(error)
        }
    }

    package func remove(key: String) async throws {
        let key = Self.storable(key)
        try await store.withConnection { _ = try await $0.query("DELETE FROM rate_limits WHERE key = \(key)", logger: store.logger) }
    }

    /// PostgreSQL text cannot hold NUL: such a key (made of what a client sent) is kept by its hash.
    static func storable(_ key: String) -> String {
        key.contains("\u{0}") ? "sha256:" + Hex.encode(SHA256.hash(key)) : key
    }

    package func removeAll() async throws {
        try await store.withConnection { _ = try await $0.query("DELETE FROM rate_limits", logger: store.logger) }
    }

    package func purge(before now: Double) async throws {
        try await store.withConnection { _ = try await $0.query("DELETE FROM rate_limits WHERE tat < \(now)", logger: store.logger) }
    }
}
