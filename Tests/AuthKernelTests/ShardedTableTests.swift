@testable import AuthStorage
@testable import AuthKernel
import Testing

struct ShardedTableTests {
    @Test func behavesLikeADictionary() {
        var table = ShardedTable<String, Int>()
        var reference: [String: Int] = [:]
        #expect(table.isEmpty && table["a"] == nil && table.removeValue(forKey: "a") == nil)
        var generator = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            let key = "k\(Int.random(in: 0..<3000, using: &generator))"
            switch step % 5 {
            case 0, 1: table[key] = step; reference[key] = step
            case 2: #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
            case 3: table[key] = nil; reference[key] = nil
            default: table[key, default: 0] += 1; reference[key, default: 0] += 1
            }
            #expect(table.count == reference.count)
        }
        for (key, value) in reference { #expect(table[key] == value) }
        #expect(Set(table.keys) == Set(reference.keys))
        #expect(table.values.sorted() == reference.values.sorted())
    }

    @Test func aSmallTableKeepsOneDictionaryUntilItGrowsAndStaysCorrectAcross() {
        var table = ShardedTable<Int, Int>()
        let limit = ShardedTable<Int, Int>.smallLimit, n = ShardedTable<Int, Int>.shardCount
        for i in 0..<limit { table[i] = i }
        #expect(!table.isSpread && table.count == limit)
        // Shard ranges partition a small table's values as they do a spread one's.
        var visited: [Int] = []
        for range in [0..<1, 1..<(n / 2), (n / 2)..<n] { table.forEachValue(inShards: range) { visited.append($0) } }
        #expect(visited.sorted() == Array(0..<limit))
        table[limit, default: 0] += 7
        #expect(table.isSpread && table.count == limit + 1 && table[limit] == 7)
        for i in 0..<limit { #expect(table[i] == i) }
        #expect(table.removeValue(forKey: 3) == 3 && table.count == limit)
        // A part that stayed small joins like any other, keeping only its own shards' keys.
        var small = ShardedTable<Int, Int>()
        for i in 0..<10 { small[i] = i }
        let ranges = [0..<(n / 2), (n / 2)..<n]
        let joined = ShardedTable(joining: [small, small], shards: ranges)
        #expect(joined.count == 10 && (0..<10).allSatisfy { joined[$0] == $0 })
    }

    @Test func shardRangesTogetherVisitEveryValueOnce() {
        var table = ShardedTable<Int, Int>()
        var visited: [Int] = []
        table.forEachValue(inShards: 0..<ShardedTable<Int, Int>.shardCount) { visited.append($0) }
        #expect(visited.isEmpty)
        for i in 0..<5000 { table[i] = i }
        let n = ShardedTable<Int, Int>.shardCount
        for range in [0..<1, 1..<(n / 3), (n / 3)..<n] { table.forEachValue(inShards: range) { visited.append($0) } }
        #expect(visited.sorted() == Array(0..<5000))
        var some = 0
        table.forEachValue(inShards: 0..<1) { _ in some += 1 }
        #expect(some > 0 && some < 5000)
    }

    @Test func partsBuiltByShardRangeJoinIntoTheWholeTable() {
        let n = ShardedTable<Int, Int>.shardCount
        let ranges = [0..<(n / 3), (n / 3)..<n]
        var whole = ShardedTable<Int, Int>()
        var parts = ranges.map { ShardedTable<Int, Int>(minimumCapacity: 3000, inShards: $0) }
        for i in 0..<3000 {
            whole[i] = i * 2
            // Every part is offered every key and keeps only those of its own shards.
            for p in parts.indices { parts[p].insert(i * 2, forKey: i, ifInShards: ranges[p]) }
        }
        #expect(parts.allSatisfy { $0.count > 0 && $0.count < 3000 } && parts.map(\.count).reduce(0, +) == 3000)
        let joined = ShardedTable(joining: parts, shards: ranges)
        #expect(joined == whole && joined.count == 3000)
        // Replacing a key in its part does not count it twice.
        var again = parts[0]
        let key = (0..<3000).first { ranges[0].contains(ShardedTable<Int, Int>.shard($0)) }!
        again.insert(-1, forKey: key, ifInShards: ranges[0])
        #expect(again.count == parts[0].count && again[key] == -1)
    }

    @Test func copiesAreIndependentAndCompareByContent() {
        var table = ShardedTable<Int, String>(minimumCapacity: 10_000)
        for i in 0..<10_000 { table[i] = "v\(i)" }
        let snapshot = table
        table[5] = "changed"
        table[10_001] = "new"
        table.removeValue(forKey: 7)
        #expect(snapshot[5] == "v5" && snapshot[10_001] == nil && snapshot[7] == "v7" && snapshot.count == 10_000)
        #expect(table.count == 10_000 && table[5] == "changed")
        var rebuilt = ShardedTable<Int, String>()
        for i in 0..<10_000 { rebuilt[i] = "v\(i)" }
        #expect(rebuilt == snapshot)
        #expect(rebuilt != table)
        #expect(ShardedTable<Int, String>() == ShardedTable<Int, String>(minimumCapacity: 100))
    }
}
