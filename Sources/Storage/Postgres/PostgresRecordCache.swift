import AuthStorage
import Foundation
import Synchronization

/// One row of the PostgreSQL store, as the cache and the optimistic writes name it.
enum RowKey: Hashable, Sendable {
    case user(UUID), session(UUID), code(String), approval(String), job(UUID)
}

/// A row as loaded or written: its record and the version the database gave it.
struct VersionedRow: Sendable {
    var key: RowKey
    var record: StoreChange
    var version: Int64
}

/// The records this instance has seen, so `/me`, userinfo, introspection, API-key exchanges and
/// device polls are answered without a round trip (contract §19).
///
/// Reads trust an entry only while the cluster's notifications are known to arrive: the instance's
/// own heartbeat, sent every second on the listening connection, must have come back within
/// ``heartbeatWindow``; a missed heartbeat or a reconnect drops everything, and an entry is never
/// older than ``maxAge``. Every write that changes or ends a user, session or code notifies the other
/// instances (rotations do not: an instance holding the session as it was finds out when its write's
/// version check fails), and the writing instance updates
/// its own entries at once. Optimistic writes may start from any entry, however old: the database
/// checks the version they read.
///
/// A load that raced with an invalidation must not put back what the invalidation removed, so each
/// load notes the ``epoch`` it began at and an entry invalidated since is not stored.
final class PostgresRecordCache: Sendable {
    /// Entries at most; the least recently used half is dropped as a generation.
    let capacity: Int
    /// Seconds an entry may be served after it was loaded or written.
    let maxAge: Double
    /// Seconds after its last heartbeat the cache stops answering (a beat a second, one missed).
    let heartbeatWindow: Double
    /// Seconds on a monotonic clock (injected by tests).
    let now: @Sendable () -> Double

    private struct Entry {
        var row: VersionedRow
        var loadedAt: Double
    }

    private struct State {
        var current: [RowKey: Entry] = [:]
        var previous: [RowKey: Entry] = [:]
        /// The current refresh hashes of the sessions held. A rotation on another instance is not
        /// notified, so an entry may still name a hash retired there: every caller reads only what
        /// a session never changes (its id, user, kind, client) or writes, and a write checks the
        /// version it read, so such an entry costs a retry, never a wrong answer.
        var byHash: [String: UUID] = [:]
        var epoch: UInt64 = 1
        /// When each key was last invalidated, by epoch; emptied (with `clearedAt` moved) when large.
        var invalidated: [RowKey: UInt64] = [:]
        var clearedAt: UInt64 = 0
        /// The last own heartbeat seen; nil: not listening (reads go to the database).
        var lastBeat: Double?
    }

    private let state = Mutex(State())

    init(capacity: Int, maxAge: Double, heartbeatWindow: Double = 2.5, now: @escaping @Sendable () -> Double = PostgresRecordCache.monotonicSeconds) {
        self.capacity = capacity
        self.maxAge = maxAge
        self.heartbeatWindow = heartbeatWindow
        self.now = now
    }

    static func monotonicSeconds() -> Double {
        let t = ContinuousClock.now - ContinuousClock.Instant.zeroish
        return Double(t.components.seconds) + Double(t.components.attoseconds) / 1e18
    }

    // MARK: Reads

    /// The records `keys` name, when every key is one the cache answers and each entry is fresh; nil
    /// sends the read to the database.
    func state(for keys: [StoreKey]) -> StoreState? {
        guard capacity > 0 else { return nil }
        let t = now()
        return state.withLock { s -> StoreState? in
            guard Self.isLive(&s, at: t, window: heartbeatWindow) else { return nil }
            var out = StoreState()
            for key in keys {
                let rowKey: RowKey
                // A lookup by hash: the hash the entry must still hold; a rotation's: at any age.
                var hash: String?, anyAge = false
                switch key {
                case .user(let id): rowKey = .user(id)
                case .session(let id): rowKey = .session(id)
                case .sessionByRefreshHash(let h), .sessionToRotate(let h):
                    guard let id = s.byHash[h] else { return nil }
                    rowKey = .session(id)
                    hash = h
                    if case .sessionToRotate = key { anyAge = true }
                case .code(let purpose, let key): rowKey = .code(CodeRecord.id(purpose: purpose, key: key))
                default: return nil
                }
                guard let entry = Self.lookup(&s, rowKey), anyAge || t - entry.loadedAt <= maxAge else { return nil }
                if let hash {
                    guard case .putSession(let session) = entry.row.record, session.refreshHashes.contains(hash) else { return nil }
                }
                out.load(entry.row.record)
            }
            return out
        }
    }

    /// The rows a write may start from: those of `keys` the cache holds, at any age (the write checks
    /// their versions), and the keys it must load.
    func rows(for keys: [StoreKey]) -> (rows: [VersionedRow], missing: [StoreKey]) {
        state.withLock { s in
            var rows: [VersionedRow] = [], missing: [StoreKey] = []
            for key in keys {
                let rowKey: RowKey?
                switch key {
                case .user(let id): rowKey = .user(id)
                case .session(let id): rowKey = .session(id)
                case .sessionByRefreshHash(let hash), .sessionToRotate(let hash): rowKey = s.byHash[hash].map { .session($0) }
                case .code(let purpose, let key): rowKey = .code(CodeRecord.id(purpose: purpose, key: key))
                case .approval(let id): rowKey = .approval(id)
                case .job(let id): rowKey = .job(id)
                default: rowKey = nil
                }
                if let rowKey, let entry = Self.lookup(&s, rowKey) { rows.append(entry.row) } else { missing.append(key) }
            }
            return (rows, missing)
        }
    }

    /// The epoch a load begins at, for ``store(loaded:since:)``.
    var epoch: UInt64 { state.withLock { $0.epoch } }

    // MARK: Changes

    /// Keeps rows loaded from the database, unless one was invalidated after the load began.
    func store(loaded rows: [VersionedRow], since epoch: UInt64) {
        guard !rows.isEmpty, capacity > 0 else { return }
        let t = now()
        state.withLock { s in
            guard s.clearedAt <= epoch else { return }
            for row in rows where (s.invalidated[row.key] ?? 0) <= epoch {
                // Never replace a newer version (a write of this instance that finished first).
                if let held = Self.peek(s, row.key), held.row.version > row.version { continue }
                Self.insert(&s, Entry(row: row, loadedAt: t), capacity: capacity)
            }
        }
    }

    /// This instance's own write: its rows as written, its deletions gone (read-your-writes).
    func apply(written rows: [VersionedRow], deleted: [RowKey]) {
        let t = now()
        state.withLock { s in
            s.epoch += 1
            for key in deleted { Self.remove(&s, key, at: s.epoch) }
            for row in rows {
                s.invalidated[row.key] = s.epoch
                Self.insert(&s, Entry(row: row, loadedAt: t), capacity: capacity)
            }
            Self.trimInvalidations(&s)
        }
    }

    /// Another instance changed or ended these rows; a deleted user takes its sessions with it.
    func invalidate(_ keys: [RowKey], deletedUsers: [UUID] = []) {
        state.withLock { s in
            s.epoch += 1
            for key in keys { Self.remove(&s, key, at: s.epoch) }
            if !deletedUsers.isEmpty {
                let gone = Set(deletedUsers)
                for generation in [s.current, s.previous] {
                    for (key, entry) in generation {
                        if case .putSession(let session) = entry.row.record, gone.contains(session.userID) { Self.remove(&s, key, at: s.epoch) }
                    }
                }
            }
            Self.trimInvalidations(&s)
        }
    }

    /// Drops every entry (a reconnect, a missed heartbeat) and stops answering until the next heartbeat.
    func drop() {
        state.withLock { s in Self.clear(&s) }
    }

    /// The instance's own heartbeat came back: every notification sent before it has arrived.
    func heartbeat() {
        let t = now()
        state.withLock { $0.lastBeat = t }
    }

    /// Seconds since the last heartbeat came back (nil: none since the cache was last dropped).
    var secondsSinceHeartbeat: Double? {
        let t = now()
        return state.withLock { s in s.lastBeat.map { t - $0 } }
    }

    /// Entries held (tests, metrics).
    var count: Int { state.withLock { s in s.current.count + s.previous.filter { s.current[$0.key] == nil }.count } }

    // MARK: Internals

    private static func isLive(_ s: inout State, at t: Double, window: Double) -> Bool {
        guard let beat = s.lastBeat else { return false }
        if t - beat <= window { return true }
        // A heartbeat went missing: what was held may have missed an invalidation too.
        clear(&s)
        return false
    }

    private static func clear(_ s: inout State) {
        s.epoch += 1
        s.current = [:]
        s.previous = [:]
        s.byHash = [:]
        s.invalidated = [:]
        s.clearedAt = s.epoch
        s.lastBeat = nil
    }

    private static func peek(_ s: State, _ key: RowKey) -> Entry? { s.current[key] ?? s.previous[key] }

    private static func lookup(_ s: inout State, _ key: RowKey) -> Entry? {
        if let entry = s.current[key] { return entry }
        guard let entry = s.previous.removeValue(forKey: key) else { return nil }
        s.current[key] = entry  // used again: into the young generation
        return entry
    }

    private static func insert(_ s: inout State, _ entry: Entry, capacity: Int) {
        guard capacity > 0 else { return }
        let key = entry.row.key
        if case .session(let id) = key {
            if let old = peek(s, key), case .putSession(let session) = old.row.record {
                for hash in session.refreshHashes where s.byHash[hash] == id { s.byHash[hash] = nil }
            }
            if case .putSession(let session) = entry.row.record {
                for hash in session.refreshHashes { s.byHash[hash] = id }
            }
        }
        s.previous[key] = nil
        s.current[key] = entry
        if s.current.count >= max(1, capacity / 2) {
            // The older generation goes, with the hashes only it pointed to.
            for (key, old) in s.previous {
                if case .putSession(let session) = old.row.record, case .session(let id) = key {
                    for hash in session.refreshHashes where s.byHash[hash] == id && s.current[key] == nil { s.byHash[hash] = nil }
                }
            }
            s.previous = s.current
            s.current = [:]
        }
    }

    private static func remove(_ s: inout State, _ key: RowKey, at epoch: UInt64) {
        if let old = peek(s, key), case .putSession(let session) = old.row.record, case .session(let id) = key {
            for hash in session.refreshHashes where s.byHash[hash] == id { s.byHash[hash] = nil }
        }
        s.current[key] = nil
        s.previous[key] = nil
        s.invalidated[key] = epoch
    }

    /// Forgets per-key invalidations when they pile up: loads begun before now may then not store.
    private static func trimInvalidations(_ s: inout State) {
        guard s.invalidated.count > 10_000 else { return }
        s.invalidated = [:]
        s.clearedAt = s.epoch
    }
}

extension ContinuousClock.Instant {
    /// A fixed instant to measure from (the clock's own zero is not public).
    fileprivate static let zeroish = ContinuousClock.now
}
