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

    package func pace(key: String, now: Double, interval: Double) async throws -> Bool {
        let key = Self.storable(key)
        do {
            return try await store.withConnection { connection -> Bool in
                for try await early in try await connection.query("SELECT authd_pace(\(key), \(now), \(interval))", logger: store.logger).decode(Bool.self) {
                    return early
                }
                return false
            }
        } catch {
            throw store.unavailable(error)
        }
    }

    package func takeAll(_ takes: [CounterTake], now: Double) async throws -> Int? {
        guard !takes.isEmpty else { return nil }
        let keys = takes.map { Self.storable($0.key) }, steps = takes.map(\.interval), tolerances = takes.map(\.tolerance)
        do {
            return try await store.withConnection { connection -> Int? in
                let rows = try await connection.query(
                    "SELECT authd_take_all(\(keys)::text[], \(steps)::float8[], \(tolerances)::float8[], \(now))", logger: store.logger)
                for try await latest in rows.decode(Double?.self) { return latest.map { Self.wait(until: $0, now: now) } }
                return nil
            }
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
        try await store.withConnection { connection in
            try await connection.query("DELETE FROM rate_limits", logger: store.logger)
            try await connection.query("DELETE FROM poll_pacing", logger: store.logger)
        }
    }

    package func purge(before now: Double) async throws {
        try await store.withConnection { connection in
            try await connection.query("DELETE FROM rate_limits WHERE tat < \(now)", logger: store.logger)
            // A device code lives minutes; its pace an hour at most.
            try await connection.query("DELETE FROM poll_pacing WHERE last_poll < \(now - 3600)", logger: store.logger)
        }
    }
}
