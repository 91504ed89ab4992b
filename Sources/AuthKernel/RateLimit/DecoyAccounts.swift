public import Foundation
import Synchronization

/// Stand-in credential records for accounts that do not exist, keyed by the email or username tried.
///
/// A provider that locks an account after repeated wrong tries runs the very same check, counter and
/// lock on a decoy when the account is unknown, so neither the answer (401 then 429) nor its timing
/// says whether the account exists. Decoys live in memory, bounded by `capacity`: the least recently
/// tried are forgotten first, and a restart forgets them all (real accounts' locks are durable).
public final class DecoyAccounts<Record: Sendable>: Sendable {
    private struct Entry {
        var record: Record
        var touched: Date
    }
    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int

    /// Creates an empty table that holds at most `capacity` decoys.
    public init(capacity: Int = 50_000) {
        self.capacity = max(1, capacity)
    }

    /// Runs `body` on the decoy for `key`, creating it with `make` the first time.
    public func withRecord<R>(
        _ key: String, now: Date, make: () -> Record, _ body: (inout Record) throws -> R
    ) rethrows -> R {
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

    /// Number of decoys held.
    public var count: Int { entries.withLock { $0.count } }
}
