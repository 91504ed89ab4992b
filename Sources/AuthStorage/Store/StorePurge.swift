import Foundation

/// How a purge walks the store's tables.
package enum StorePurge {
    /// Shard ranges to scan, one write each: sixteen parts for the file store (its writes hold the
    /// lock every read takes, and a million sessions at once held it for tens of milliseconds),
    /// one for a database, whose key selects the rows.
    package static func parts(_ store: any AuthStore) -> [Range<Int>] {
        let shards = ShardedTable<UUID, SessionRecord>.shardCount
        guard !store.isShared else { return [0..<shards] }
        let count = 16
        return (0..<count).map { ($0 * shards / count)..<(($0 + 1) * shards / count) }
    }
}
