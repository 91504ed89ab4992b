import AuthStorage
public import Foundation
import Synchronization

/// Stand-in credential records for accounts that do not exist, keyed by the email or username tried.
///
/// A provider that locks an account after repeated wrong tries runs the very same check, counter and
/// lock on a decoy when the account is unknown, so neither the answer (401 then 429) nor its timing
/// says whether the account exists. Alone, decoys live in memory, bounded by `capacity`: the least
/// recently tried are forgotten first, and a restart forgets them all (real accounts' locks are
/// durable). Keys are kept as their SHA-256, so an entry's size does not depend on what was tried:
/// `capacity` bounds the bytes held as well as the entries. With a `DecoyRecordStore` shared by several instances, a decoy counts the tries made
/// on every instance, as a real account's counter does, so spreading guesses over instances does not
/// tell an unknown account from a known one.
public final class DecoyAccounts<Record: Codable & Sendable>: Sendable {
    private struct Entry {
        var record: Record
        var touched: Date
    }
    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int
    private let shared: (any DecoyRecordStore)?
    private let namespace: String

    /// Creates an empty table that holds at most `capacity` decoys in memory, or that keeps them in
    /// `shared` under `namespace` (the provider's id).
    package init(capacity: Int = 50_000, shared: (any DecoyRecordStore)? = nil, namespace: String = "") {
        self.capacity = max(1, capacity)
        self.shared = shared
        self.namespace = namespace
    }

    /// Runs `body` on the decoy for `key`, creating it with `make` the first time.
    /// - Throws: `body`'s errors; `StoreError/unavailable` when shared decoys cannot be reached.
    public func withRecord<R: Sendable>(
        _ key: String, now: Date, make: @Sendable () -> Record, _ body: @Sendable (inout Record) throws -> R
    ) async throws -> R {
        let key = Hex.encode(SHA256.hash(key))
        guard let shared else { return try withMemoryRecord(key, now: now, make: make, body) }
        return try await shared.update(namespace + "\u{0}" + key, now: now) { stored in
            var record = stored.flatMap { try? StoreCoding.decoder().decode(Record.self, from: $0) } ?? make()
            let result = try body(&record)
            stored = try StoreCoding.encoder().encode(record)
            return result
        }
    }

    private func withMemoryRecord<R>(_ key: String, now: Date, make: () -> Record, _ body: (inout Record) throws -> R) rethrows -> R {
        try entries.withLock { entries in
            var entry = entries[key] ?? Entry(record: make(), touched: now)
            let result = try body(&entry.record)
            entry.touched = now
            if entries[key] == nil, entries.count >= capacity {
                // Forget the least recently tried tenth in one go, so this stays rare.
                let stale = entries.sorted { $0.value.touched < $1.value.touched }.prefix(max(1, capacity / 10))
                for (k, _) in stale { entries[k] = nil }
            }
            entries[key] = entry
            return result
        }
    }

    /// Number of decoys held in memory.
    package var count: Int { entries.withLock { $0.count } }
}

/// Decoy records shared by the instances of one deployment (a database table).
package protocol DecoyRecordStore: Sendable {
    /// Runs `body` on the stored bytes for `key` (nil when there are none) under a lock that
    /// serialises concurrent updates of the key on every instance, and stores what it leaves.
    func update<R: Sendable>(_ key: String, now: Date, _ body: @Sendable (inout Data?) throws -> R) async throws -> R
    /// Forgets decoys nobody has tried since `date` (their locks have long run out).
    func purge(untouchedSince date: Date) async throws
}
