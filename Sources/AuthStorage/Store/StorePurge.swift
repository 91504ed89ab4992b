import Foundation

/// How a purge walks the store's tables.
package enum StorePurge {
    /// Rows a database loads for one purge write; the purge repeats while it finds full batches.
    package static let batch = 5000
    /// Most batches one purge run takes (the next run, minutes later, takes the rest).
    package static let maxBatches = 20

    /// Shard ranges to scan, one write each: sixteen parts for the file store (its writes hold the
    /// lock every read takes, and a million sessions at once held it for tens of milliseconds),
    /// one for a database, whose key selects the rows.
    package static func parts(_ store: any AuthStore) -> [Range<Int>] {
        let shards = ShardedTable<UUID, SessionRecord>.shardCount
        guard !store.isShared else { return [0..<shards] }
        let count = 16
        return (0..<count).map { ($0 * shards / count)..<(($0 + 1) * shards / count) }
    }

    /// Runs `write` over the store in parts (``parts(_:)``) and returns the records it deleted; on
    /// a database each part repeats while it finds full batches, up to ``maxBatches``.
    package static func run(_ store: any AuthStore, _ write: (Range<Int>) async throws -> Int) async throws -> Int {
        var deleted = 0
        for part in parts(store) {
            var batches = 0
            while true {
                let found = try await write(part)
                deleted += found
                batches += 1
                guard store.isShared, found >= batch, batches < maxBatches else { break }
            }
        }
        return deleted
    }
}
