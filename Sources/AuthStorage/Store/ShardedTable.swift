/// A dictionary split into 256 shards by key hash, for the store's tables.
///
/// Compaction takes the state as it is (a copy-on-write share) and encodes it off the lock; the next
/// write to a table then copied the whole table while holding the store's lock. At a million users
/// that was a 0.9-1.2 s stall of every read and write (measured with `authd bench store-open
/// --compact-after-bytes`). Split, the first write to each shard copies only that shard, about a
/// 256th of the table, and the copying is spread over the writes that reach them.
package struct ShardedTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    package static var shardCount: Int { 256 }
    /// Entries a table keeps in one dictionary before it spreads them over the shards: a state made
    /// per request by the PostgreSQL backend holds a record or two, and 256 shards made and freed
    /// for each cost more than the request's own work.
    package static var smallLimit: Int { 64 }

    /// Empty until the first insert, so an empty state allocates nothing; one dictionary while the
    /// table is small (the shard of every key is then 0); ``shardCount`` of them after.
    private var shards: [[Key: Value]] = []
    /// Entries in all shards.
    package private(set) var count = 0

    /// An empty table.
    package init() {}

    /// An empty table with room for about `minimumCapacity` entries.
    package init(minimumCapacity: Int) {
        self.init(minimumCapacity: minimumCapacity, inShards: 0..<Self.shardCount)
    }

    /// An empty table for the keys of the shards in `range` (``insert(_:forKey:ifInShards:)``), with
    /// room for about `minimumCapacity` entries in all shards: one of several parts built on
    /// separate threads and joined with ``init(joining:shards:)``.
    package init(minimumCapacity: Int, inShards range: Range<Int>) {
        let perShard = minimumCapacity / Self.shardCount + minimumCapacity / (Self.shardCount * 8) + 1
        shards = (0..<Self.shardCount).map { range.contains($0) ? Dictionary(minimumCapacity: perShard) : [:] }
    }

    /// One table from parts that each hold the keys of their own range of shards (`ranges[i]` for
    /// `parts[i]`, together covering every shard): the parts' dictionaries are shared, not copied.
    package init(joining parts: [ShardedTable], shards ranges: [Range<Int>]) {
        shards = Array(repeating: [:], count: Self.shardCount)
        for (part, range) in zip(parts, ranges) where !part.shards.isEmpty {
            if part.shards.count == 1 {
                for (key, value) in part.shards[0] where range.contains(Self.shard(key)) && shards[Self.shard(key)].updateValue(value, forKey: key) == nil {
                    count += 1
                }
            } else {
                for i in range { shards[i] = part.shards[i] }
                count += part.count
            }
        }
    }

    /// Inserts (or replaces) a value if its key's shard is in `range`, and does nothing otherwise.
    @inline(__always)
    package mutating func insert(_ value: Value, forKey key: Key, ifInShards range: Range<Int>) {
        let i = Self.shard(key)
        guard range.contains(i) else { return }
        if shards.count != Self.shardCount { spread() }
        if shards[i].updateValue(value, forKey: key) == nil { count += 1 }
    }

    /// Where `key` is kept now: its shard, or the one dictionary of a small table.
    @inline(__always)
    private func index(_ key: Key) -> Int { shards.count == 1 ? 0 : Self.shard(key) }

    /// Makes room for a key about to be added: the one dictionary of an empty table, or the shards
    /// once a small table outgrows ``smallLimit``.
    @inline(__always)
    private mutating func makeRoom() {
        if shards.isEmpty {
            shards = [[:]]
        } else if shards.count == 1, count >= Self.smallLimit {
            spread()
        }
    }

    /// Moves every entry into its own shard.
    private mutating func spread() {
        let small = shards.first ?? [:]
        shards = Array(repeating: [:], count: Self.shardCount)
        for (key, value) in small { shards[Self.shard(key)][key] = value }
    }

    /// The shard a key lives in: the hash's top bits (a dictionary picks its buckets from the low ones).
    @inline(__always)
    package static func shard(_ key: Key) -> Int { Int(truncatingIfNeeded: UInt(bitPattern: key.hashValue) >> (UInt.bitWidth - 8)) }

    /// Whether the entries are spread over the shards (a small table keeps them in one dictionary).
    package var isSpread: Bool { shards.count == Self.shardCount }

    /// Whether the table is empty.
    package var isEmpty: Bool { count == 0 }

    /// The value for a key; setting nil removes it.
    package subscript(key: Key) -> Value? {
        get { shards.isEmpty ? nil : shards[index(key)][key] }
        _modify {
            makeRoom()
            let i = index(key)
            let before = shards[i].count
            defer { count += shards[i].count - before }
            yield &shards[i][key]
        }
    }

    /// The value for a key, or `defaultValue` inserted in place.
    package subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[key] ?? defaultValue() }
        _modify {
            makeRoom()
            let i = index(key)
            let before = shards[i].count
            defer { count += shards[i].count - before }
            yield &shards[i][key, default: defaultValue()]
        }
    }

    /// Removes a key; returns its value.
    @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        guard !shards.isEmpty else { return nil }
        let i = index(key)
        guard let old = shards[i].removeValue(forKey: key) else { return nil }
        count -= 1
        return old
    }

    /// Every value, in no particular order.
    package var values: [Value] {
        var out: [Value] = []
        out.reserveCapacity(count)
        for shard in shards { out.append(contentsOf: shard.values) }
        return out
    }

    /// Calls `body` with each value in the shards `range` names (of ``shardCount``), in no particular
    /// order: parallel workers each take a range.
    package func forEachValue(inShards range: Range<Int>, _ body: (Value) throws -> Void) rethrows {
        if shards.count == 1 {
            let all = range == 0..<Self.shardCount
            for (key, value) in shards[0] where all || range.contains(Self.shard(key)) { try body(value) }
            return
        }
        guard !shards.isEmpty else { return }
        for i in range { for value in shards[i].values { try body(value) } }
    }

    /// Every key, in no particular order.
    package var keys: [Key] {
        var out: [Key] = []
        out.reserveCapacity(count)
        for shard in shards { out.append(contentsOf: shard.keys) }
        return out
    }
}

extension ShardedTable: Equatable where Value: Equatable {
    /// The same keys with equal values.
    package static func == (a: Self, b: Self) -> Bool {
        guard a.count == b.count else { return false }
        for shard in a.shards {
            for (key, value) in shard where b[key] != value { return false }
        }
        return true
    }
}
