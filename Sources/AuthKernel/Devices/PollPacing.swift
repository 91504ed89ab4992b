import Synchronization

/// RFC 8628's pacing of device polls, in memory: when each pending user code was last polled and
/// the interval it must keep (each `slow_down` adds 5 seconds). A poll of a pending code is then a
/// read, not a store write. A restart, or another instance of a shared database, forgets it: a
/// device may then poll once early, which costs nothing but that one answer.
package final class PollPacing: Sendable {
    struct Entry {
        var last: Double
        var interval: Double
    }

    /// Entries kept at most (by default about 5 MB, far more codes than are ever pending at once).
    let maxEntries: Int
    private let entries = Mutex<[String: Entry]>([:])

    /// Creates an empty table.
    package init(maxEntries: Int = 100_000) { self.maxEntries = maxEntries }

    /// How many codes it remembers.
    package var count: Int { entries.withLock { $0.count } }

    /// Records a poll of `code` at `now`; true when it came sooner than the interval (the caller
    /// answers `slow_down`, and the interval has grown by 5 seconds).
    package func tooSoon(_ code: String, now: Double, interval: Double) -> Bool {
        entries.withLock { entries in
            if var entry = entries[code] {
                let early = now - entry.last < entry.interval
                if early { entry.interval += 5 }
                entry.last = now
                entries[code] = entry
                return early
            }
            if entries.count >= maxEntries { Self.prune(&entries, now: now, maxEntries: maxEntries) }
            entries[code] = Entry(last: now, interval: interval)
            return false
        }
    }

    /// Forgets a code that is no longer pending.
    func forget(_ code: String) {
        _ = entries.withLock { $0.removeValue(forKey: code) }
    }

    /// Drops the entries whose device may poll again anyway, then, if still full, the oldest half.
    private static func prune(_ entries: inout [String: Entry], now: Double, maxEntries: Int) {
        entries = entries.filter { now - $0.value.last < $0.value.interval }
        guard entries.count >= maxEntries else { return }
        let keep = entries.sorted { $0.value.last > $1.value.last }.prefix(maxEntries / 2)
        entries = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
    }
}
