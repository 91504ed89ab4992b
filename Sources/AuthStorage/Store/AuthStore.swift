import Synchronization
/// Where the kernel keeps users, sessions, codes, approvals and jobs: the JSON-file ``JournalStore``
/// (the embedded default) or a database shared by several authd instances.
///
/// Every service reads and writes through these two calls, and every rule that must be exact (refresh
/// rotation, single-use codes, failure counters, uniqueness) is a pure function of a ``StoreState``
/// run inside ``write(_:durability:_:)``. A store makes each write atomic and isolated: the file store
/// by running bodies one at a time on its actor, a database store by locking the rows the keys name
/// inside a transaction (and retrying the body when a uniqueness constraint or a deadlock says a
/// concurrent write won).
package protocol AuthStore: Sendable {
    /// Runs `body` on a state holding at least the records `keys` name.
    /// - Throws: ``StoreError/unavailable`` when the store cannot be read.
    func read<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (StoreState) throws -> R) async throws -> R

    /// Runs `body` with exclusive access to the records `keys` name and returns once its changes are
    /// durable (or, with ``WriteDurability/eventual``, applied). Changes the body made before throwing
    /// are kept too (bodies check before they change anything). A body that changes nothing writes nothing.
    /// - Throws: ``StoreError/unavailable`` when the store cannot persist; the body's own errors;
    ///   409 errors when a uniqueness rule outside the named keys refuses the change.
    func write<R: Sendable>(
        _ keys: [StoreKey], durability: WriteDurability, _ body: @Sendable (inout StoreState) throws -> R
    ) async throws -> R

    /// Returns once every change made so far, including ``WriteDurability/eventual`` ones, is durable.
    func waitUntilDurable() async throws

    /// Stores an import's records as `produce` hands them over, batch by batch (users before what
    /// refers to them), telling `stored` how many are written as it goes: `authd import` of a million
    /// records into a database takes minutes, and held whole they were gigabytes. A database store
    /// keeps them all in one transaction; the journal store writes each batch as it comes.
    func load(streaming produce: @Sendable (_ store: @Sendable ([StoreChange]) async throws -> Void) async throws -> Void, stored: @Sendable @escaping (Int) -> Void) async throws

    /// How many users and sessions the store holds.
    func counts() async throws -> StoreCounts

    /// Hands every record to `sink` a batch at a time, their counts first, without holding them all
    /// (an export of a database: cursors in one snapshot). Returns false when the store does not
    /// stream, and the caller reads it whole (the file store, whose records are in memory anyway).
    func exportRecords(into sink: any StoreExportSink) async throws -> Bool

    /// Whether other processes use the same data (several authd instances on one database): work that
    /// must run once, like a background job, is then claimed through the store, not just in memory.
    var isShared: Bool { get }

    /// Whether writes can currently succeed (for health checks).
    var isWritable: Bool { get async }

    /// Finishes pending writes and releases the store.
    func close() async
}

extension AuthStore {
    /// One write per batch; `stored` hears of each.
    package func load(streaming produce: @Sendable (_ store: @Sendable ([StoreChange]) async throws -> Void) async throws -> Void, stored: @Sendable @escaping (Int) -> Void) async throws {
        let count = LoadCount()
        try await produce { batch in
            try await self.write([]) { state in
                for change in batch { state.replay(change) }
            }
            stored(count.add(batch.count))
        }
    }

    /// Not streamed: the caller reads the records whole.
    package func exportRecords(into sink: any StoreExportSink) async throws -> Bool { false }

    /// Every record of `changes` (users first), as one batch.
    package func load(_ changes: [StoreChange], stored: @Sendable @escaping (Int) -> Void) async throws {
        try await load(streaming: { store in try await store(changes) }, stored: stored)
    }

    /// ``write(_:durability:_:)`` with ``WriteDurability/synced``.
    package func write<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (inout StoreState) throws -> R) async throws -> R {
        try await write(keys, durability: .synced, body)
    }
}

/// Records stored so far by a streamed load.
package final class LoadCount: Sendable {
    private let value = Mutex(0)
    package init() {}
    /// Adds `n` and gives the new total.
    package func add(_ n: Int) -> Int { value.withLock { $0 += n; return $0 } }
}

/// Record counts, for `authd check` and backups.
package struct StoreCounts: Sendable, Equatable {
    /// Users.
    package var users: Int
    /// Sessions.
    package var sessions: Int
    /// Creates counts.
    package init(users: Int, sessions: Int) {
        self.users = users
        self.sessions = sessions
    }
}
