import AuthStorage
package import AuthKernel
import Logging
import PostgresNIO

/// Rate-limit counters in the `rate_limits` table, so a limit holds across every instance.
///
/// One statement per check: the conditional upsert moves the key's TAT only when the event is
/// allowed, and the row lock it takes serialises concurrent checks of one key.
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
        let allowed = try await store.client.query(
            """
            INSERT INTO rate_limits AS r (key, tat) VALUES (\(key), \(now) + \(interval))
            ON CONFLICT (key) DO UPDATE SET tat = greatest(r.tat, \(now)) + \(interval)
            WHERE greatest(r.tat, \(now)) - \(tolerance) <= \(now)
            RETURNING tat
            """, logger: store.logger)
        for try await _ in allowed.decode(Double.self) { return nil }
        // Refused: say how long until the next event fits (the TAT only moves forward).
        let rows = try await store.client.query("SELECT tat FROM rate_limits WHERE key = \(key)", logger: store.logger)
        for try await tat in rows.decode(Double.self) { return Self.wait(until: max(tat, now) - tolerance, now: now) }
        return 1
    }

    package func takeAll(_ takes: [CounterTake], now: Double) async throws -> Int? {
        let takes = takes.map { CounterTake(key: Self.storable($0.key), interval: $0.interval, tolerance: $0.tolerance) }
        let keys = Array(Set(takes.map(\.key))).sorted()
        let logger = store.logger
        do {
            return try await store.client.withTransaction(logger: logger) { connection -> Int? in
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
            }
        } catch {
            throw store.unavailable(error)
        }
    }

    package func remove(key: String) async throws {
        let key = Self.storable(key)
        try await store.client.query("DELETE FROM rate_limits WHERE key = \(key)", logger: store.logger)
    }

    /// PostgreSQL text cannot hold NUL: such a key (made of what a client sent) is kept by its hash.
    static func storable(_ key: String) -> String {
        key.contains("\u{0}") ? "sha256:" + Hex.encode(SHA256.hash(key)) : key
    }

    package func removeAll() async throws {
        try await store.client.query("DELETE FROM rate_limits", logger: store.logger)
    }

    package func purge(before now: Double) async throws {
        try await store.client.query("DELETE FROM rate_limits WHERE tat < \(now)", logger: store.logger)
    }
}
