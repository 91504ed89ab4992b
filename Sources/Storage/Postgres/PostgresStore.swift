import AuthStorage
package import AuthKernel
import Foundation
package import Logging
import NIOCore
import NIOPosix
package import PostgresNIO

/// The store on a PostgreSQL database that several authd instances share.
///
/// It keeps the records and rules of the file store: each record is a JSON document in a `record`
/// column, with the columns the queries, uniqueness constraints and cascades need beside it, and a
/// `version` every write moves on.
///
/// - A read is answered from this instance's ``PostgresRecordCache`` when it holds every record the
///   keys name, fresh and with the cluster's notifications known to arrive; else one query loads them.
/// - A write first runs its body on the records as the cache or one query has them, then sends what
///   it changed and the versions it read in one call (`authd_apply`), which commits only if no row
///   changed meanwhile. A conflict runs the write again the old way: `SELECT … FOR UPDATE` inside a
///   transaction, the body, the same call. A concurrent write that a row lock cannot see coming (two
///   sign-ins creating the same new email) fails a unique constraint: the write is retried, so the
///   body then sees the other's row, and a clash that remains becomes the contract's 409.
/// - Writes that change or end a user or a session tell the other instances in the same commit.
package final class PostgresStore: AuthStore {
    /// The connection pool (for admin commands and tests; the store itself goes through ``withConnection(_:)``).
    package let client: PostgresClient
    /// The logger for database requests.
    package let logger: Logger
    /// Round trips this store made (tests count them; the bench divides them by requests).
    package let roundTrips: RoundTripCounter
    /// This process, so it skips its own notifications.
    package let instance = UUID().uuidString.lowercased()
    let leases: PostgresLeases
    let cache: PostgresRecordCache
    /// One connection's configuration: the listener's own connection and the reachability probe.
    let connectionConfiguration: PostgresConnection.Configuration
    private let runner: Task<Void, Never>

    /// Attempts of a write that lost a race (serialization failure, deadlock, unique violation).
    static let maxAttempts = 5

    private init(
        client: PostgresClient, configuration: PostgresConnection.Configuration, settings: AuthConfig.PostgresSettings,
        runner: Task<Void, Never>, logger: Logger
    ) {
        self.client = client
        self.runner = runner
        self.logger = logger
        self.connectionConfiguration = configuration
        let counter = RoundTripCounter()
        self.roundTrips = counter
        self.leases = PostgresLeases(
            client: client, probe: configuration, acquireTimeout: .milliseconds(Int(settings.acquireTimeout * 1000)), counter: counter, logger: logger)
        self.cache = PostgresRecordCache(capacity: settings.cacheSize, maxAge: settings.cacheMaxAge)
    }

    /// Connects and checks that the schema is exactly the one this build knows.
    /// - Throws: ``PostgresStoreError`` when the database cannot be reached, is not migrated, or was
    ///   migrated by a newer authd.
    package static func open(_ settings: AuthConfig.PostgresSettings, logger: Logger) async throws -> PostgresStore {
        let version = try await schemaVersion(settings, logger: logger)
        guard version == Migrations.latest else {
            throw version < Migrations.latest
                ? PostgresStoreError("the database schema is at version \(version), this authd needs \(Migrations.latest): run `authd migrate` first")
                : PostgresStoreError("the database schema is at version \(version), newer than this authd knows (\(Migrations.latest)): upgrade authd")
        }
        return try connect(settings, logger: logger)
    }

    /// The database's schema version (0: never migrated), over one connection of its own: a wrong
    /// address, password or certificate fails here at once with the server's or TLS's own reason,
    /// instead of after the pool's minute of retries.
    /// - Throws: ``PostgresStoreError`` naming host, port and database (never the URL: it may hold the password).
    package static func schemaVersion(_ settings: AuthConfig.PostgresSettings, logger: Logger) async throws -> Int {
        let url = try PostgresURL(settings)
        do {
            let connection = try await PostgresConnection.connect(configuration: try url.connection(), id: 0, logger: logger)
            do {
                let version = try await Migrations.currentVersion(connection, logger: logger)
                try await connection.close()
                return version
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw PostgresStoreError("cannot use the database at \(url.place): \(String(reflecting: error))")
        }
    }

    /// Connects without checking the schema (`authd migrate`).
    package static func connect(_ settings: AuthConfig.PostgresSettings, logger: Logger) throws -> PostgresStore {
        let url = try PostgresURL(settings)
        var configuration = url.client
        configuration.options.maximumConnections = settings.poolSize
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        // Started at once, so the first query does not find the pool not yet running.
        let runner = Task.immediate { await client.run() }
        return PostgresStore(client: client, configuration: try url.connection(), settings: settings, runner: runner, logger: logger)
    }

    /// The schema version this build needs.
    package static var requiredSchemaVersion: Int { Migrations.latest }

    /// Applies every migration the database lacks; returns the versions applied.
    package func migrate() async throws -> [Int] {
        try await Migrations.apply(client, logger: logger)
    }

    /// Runs `body` on a pooled connection, waiting at most `storage.postgres.acquire_timeout` for one.
    /// - Throws: ``StoreError/unavailable`` when none came in time or the database is away; `body`'s errors.
    func withConnection<R: Sendable>(_ body: @Sendable (CountedConnection) async throws -> R) async throws -> R {
        do {
            return try await leases.withConnection(body)
        } catch let error as ConnectionUnavailable {
            logger.error("database request refused", metadata: ["error": "\(error)"])
            throw StoreError.unavailable
        }
    }

    // MARK: AuthStore

    /// Rows of several instances: background jobs are claimed through the database.
    package var isShared: Bool { true }

    /// Writable while the database answers.
    package var isWritable: Bool {
        get async { (try? await withConnection { _ = try await $0.query("SELECT 1", logger: self.logger) }) != nil }
    }

    package func read<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (StoreState) throws -> R) async throws -> R {
        if let state = cache.state(for: keys) { return try body(state) }
        let epoch = cache.epoch
        let rows: [VersionedRow]
        do {
            rows = try await withConnection { connection in try await PostgresRecords.load(keys, on: connection, logger: self.logger) }
        } catch {
            throw unavailable(error)
        }
        if keys.allSatisfy(\.namesOneRecord) { cache.store(loaded: rows, since: epoch) }
        return try body(Self.state(rows))
    }

    package func write<R: Sendable>(
        _ keys: [StoreKey], durability: WriteDurability, _ body: @Sendable (inout StoreState) throws -> R
    ) async throws -> R {
        if let outcome = try await optimisticWrite(keys, body) { return try outcome.get() }
        return try await lockedWrite(keys, body)
    }

    /// The body on the records as the cache or one unlocked query has them, then one `authd_apply`
    /// that checks their versions; nil when a row changed meanwhile (or a uniqueness rule refused).
    private func optimisticWrite<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (inout StoreState) throws -> R) async throws -> Result<R, any Error>? {
        let epoch = cache.epoch
        let (cached, missing) = cache.rows(for: keys)
        let cacheable = keys.allSatisfy(\.namesOneRecord)
        let logger = self.logger, instance = self.instance
        do {
            let (outcome, loaded, apply, versions) = try await withConnection { connection in
                let loaded = missing.isEmpty ? [] : try await PostgresRecords.load(missing, on: connection, logger: logger)
                // A row the query found wins over the cache's (it is at least as new).
                let rows = Self.distinct(loaded + cached)
                var state = Self.state(rows)
                // The body's own error is returned, not thrown, so what it changed before throwing is committed.
                let outcome: Result<R, any Error>
                do { outcome = .success(try body(&state)) } catch { outcome = .failure(error) }
                var apply = try Self.changes(of: &state, instance: instance, loaded: rows)
                // Nothing changed and everything came from one snapshot: nothing to check either.
                if apply.written.isEmpty && cached.isEmpty { return (outcome, loaded, apply, [Int64?]()) }
                for row in rows { apply.check(row.key, version: row.version) }
                return (outcome, loaded, apply, try await apply.run(on: connection, logger: logger))
            }
            if cacheable { cache.store(loaded: loaded, since: epoch) }
            remember(apply, versions: versions)
            return outcome
        } catch let error as PSQLError where Self.isConflict(error) {
            cache.invalidate(cached.map(\.key))
            return nil
        } catch {
            throw unavailable(error)
        }
    }

    /// The write under row locks, retried when it lost a race the locks cannot prevent.
    private func lockedWrite<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (inout StoreState) throws -> R) async throws -> R {
        let logger = self.logger, instance = self.instance
        var attempt = 0
        while true {
            attempt += 1
            let epoch = cache.epoch
            do {
                let (outcome, loaded, apply, versions) = try await withConnection { connection in
                    try await connection.transaction(logger: logger) { connection in
                        var loaded: [VersionedRow] = []
                        for key in keys { loaded += try await PostgresRecords.load(key, on: connection, lock: true, logger: logger) }
                        var state = Self.state(Self.distinct(loaded))
                        let outcome: Result<R, any Error>
                        do { outcome = .success(try body(&state)) } catch { outcome = .failure(error) }
                        // Every commit is durable, `.eventual` ones too: a commit costs the same for a known account
                        // as for an unknown one (the refusal floors cover the decoys), and nothing is lost on a crash.
                        let apply = try Self.changes(of: &state, instance: instance, loaded: loaded)
                        let versions = apply.written.isEmpty ? [] : try await apply.run(on: connection, logger: logger)
                        return (outcome, loaded, apply, versions)
                    }
                }
                if keys.allSatisfy(\.namesOneRecord) { cache.store(loaded: loaded, since: epoch) }
                remember(apply, versions: versions)
                return try outcome.get()
            } catch let error as PSQLError {
                if let sqlState = error.serverInfo?[.sqlState] {
                    if Self.retried.contains(sqlState), attempt < Self.maxAttempts { continue }
                    if sqlState == "23505" { throw Self.conflict(constraint: error.serverInfo?[.constraintName]) }
                }
                throw unavailable(error)
            }
        }
    }

    /// This instance's cache after its own commit (read-your-writes).
    private func remember(_ apply: PostgresRecords.Apply, versions: [Int64?]) {
        guard !apply.written.isEmpty else { return }
        cache.apply(written: apply.rows(versions: versions), deleted: apply.deleted)
    }

    /// The changes a body made as one `authd_apply` call, with the notices for the other instances:
    /// a user, session or code changed or ended, but not a session's usual rotation (a code's id, any
    /// text, travels as hex).
    /// A new session or code (not among `loaded`) is in no instance's cache: it needs no notice.
    static func changes(of state: inout StoreState, instance: String, loaded: [VersionedRow]) throws -> PostgresRecords.Apply {
        let seen = Set(loaded.map(\.key))
        var apply = PostgresRecords.Apply()
        var notices: [String] = []
        for change in state.takeChanges() {
            switch change {
            case .rotateSession(let rotation):
                // A session deleted later in the same changes is left to its delete.
                if let session = state.session(id: rotation.id) { try apply.add(.putSession(session)) }
            case .putUser(let user):
                try apply.add(change)
                notices.append("u" + user.id.lowercased)
            case .deleteUser(let id):
                try apply.add(change)
                notices.append("U" + id.lowercased)
            case .putSession(let session):
                try apply.add(change)
                if seen.contains(.session(session.id)) { notices.append("s" + session.id.lowercased) }
            case .deleteSession(let id):
                try apply.add(change)
                notices.append("s" + id.lowercased)
            case .putCode(let code):
                try apply.add(change)
                if seen.contains(.code(code.id)) { notices.append("c" + Hex.encode(Array(code.id.utf8))) }
            case .deleteCode(let id):
                try apply.add(change)
                notices.append("c" + Hex.encode(Array(id.utf8)))
            default:
                try apply.add(change)
            }
        }
        apply.notices = PostgresClusterEvents.invalidations(notices, from: instance)
        return apply
    }

    static func state(_ rows: [VersionedRow]) -> StoreState {
        var state = StoreState()
        for row in rows { state.load(row.record) }
        return state
    }

    /// Each row once, the first of each key kept.
    static func distinct(_ rows: [VersionedRow]) -> [VersionedRow] {
        guard rows.count > 1 else { return rows }
        var seen = Set<RowKey>()
        return rows.filter { seen.insert($0.key).inserted }
    }

    /// A row changed since it was read, a deadlock, or a uniqueness clash: run the write under locks.
    static func isConflict(_ error: PSQLError) -> Bool {
        error.serverInfo?[.sqlState].map { retried.contains($0) } ?? false
    }

    /// One transaction for every batch: puts by `COPY`, anything else a thousand records to an
    /// `authd_apply`; the count reported as each thousand is stored. Meant for an empty store (`authd import`).
    package func load(streaming produce: @Sendable (_ store: @Sendable ([StoreChange]) async throws -> Void) async throws -> Void, stored: @Sendable @escaping (Int) -> Void) async throws {
        let count = LoadCount()
        let logger = self.logger
        do {
            try await client.withConnection { connection in
                let connection = CountedConnection(connection: connection, counter: self.roundTrips)
                try await connection.transaction(logger: logger) { connection in
                    try await produce { batch in
                        var state = StoreState()
                        for change in batch { state.replay(change) }
                        let changes = state.takeChanges(wholeRecords: true)
                        // An import's snapshot is puts alone: copied. Anything else keeps its order through `authd_apply`.
                        if PostgresCopy.canCopy(changes) {
                            for start in stride(from: 0, to: changes.count, by: 1000) {
                                let part = Array(changes[start..<min(start + 1000, changes.count)])
                                try await PostgresCopy.copy(part, on: connection, logger: logger)
                                let before = count.add(0), done = count.add(part.count)
                                if done / 1000 != before / 1000 { stored(done) }
                            }
                            return
                        }
                        for start in stride(from: 0, to: changes.count, by: 1000) {
                            var apply = PostgresRecords.Apply()
                            for row in changes[start..<min(start + 1000, changes.count)] { try apply.add(row) }
                            _ = try await apply.run(on: connection, logger: logger)
                            let before = count.add(0), done = count.add(apply.written.count)
                            if done / 1000 != before / 1000 { stored(done) }
                        }
                    }
                }
            }
        } catch {
            throw unavailable(error)
        }
        stored(count.add(0))
    }

    /// Every record through cursors, a thousand at a time, all in one read-only snapshot, so an
    /// export of a million users holds a batch, not the database.
    package func exportRecords(into sink: any StoreExportSink) async throws -> Bool {
        let logger = self.logger
        do {
            try await withConnection { connection in
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                do {
                    let counts = try await connection.query(
                        """
                        SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM sessions), (SELECT count(*) FROM verification_codes),
                            (SELECT count(*) FROM approvals), (SELECT count(*) FROM jobs)
                        """, logger: logger)
                    for try await (users, sessions, codes, approvals, jobs) in counts.decode((Int, Int, Int, Int, Int).self) {
                        try sink.begin(records: users + sessions + codes + approvals + jobs, users: users, sessions: sessions)
                    }
                    // Users before what refers to them, as an import stores them.
                    for (kind, table) in [("u", "users"), ("s", "sessions"), ("c", "verification_codes"), ("a", "approvals"), ("j", "jobs")] {
                        try await connection.query(PostgresQuery(unsafeSQL: "DECLARE authd_export NO SCROLL CURSOR FOR SELECT '\(kind)', version, record::text FROM \(table)"), logger: logger)
                        while true {
                            let rows = try await PostgresRecords.load(PostgresQuery(unsafeSQL: "FETCH 1000 FROM authd_export"), on: connection, logger: logger)
                            if rows.isEmpty { break }
                            try sink.records(rows.map(\.record))
                        }
                        try await connection.query("CLOSE authd_export", logger: logger)
                    }
                    try await connection.query("COMMIT", logger: logger)
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch let error as PSQLError {
            throw unavailable(error)
        }
        return true
    }

    /// Serialization failure, deadlock, unique violation: another transaction won; run the body again.
    static let retried: Set<String> = ["40001", "40P01", "23505"]

    /// The 409 a uniqueness constraint stands for.
    static func conflict(constraint: String?) -> AuthError {
        switch constraint {
        case "users_username_unique": .usernameTaken
        default: .identityInUse
        }
    }

    /// Logs a failed database request (binds are redacted by PostgresNIO) and gives the store's 503.
    func unavailable(_ error: any Error) -> any Error {
        if error is StoreError { return error }
        logger.error("database request failed", metadata: ["error": "\(String(reflecting: error))"])
        return StoreError.unavailable
    }

    /// Every write was durable when it returned (commits are synchronous).
    package func waitUntilDurable() async throws {}

    package func counts() async throws -> StoreCounts {
        do {
            return try await withConnection { connection in
                let rows = try await connection.query("SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM sessions)", logger: self.logger)
                for try await (users, sessions) in rows.decode((Int, Int).self) { return StoreCounts(users: users, sessions: sessions) }
                return StoreCounts(users: 0, sessions: 0)
            }
        } catch {
            throw unavailable(error)
        }
    }

    package func close() async {
        runner.cancel()
        _ = await runner.value
    }
}

extension StoreKey {
    /// Whether the key names at most one record (its rows may be cached; a listing's may not).
    var namesOneRecord: Bool {
        switch self {
        case .user, .userByEmail, .userByUsername, .userByIdentity, .session, .sessionByRefreshHash, .sessionToRotate, .code, .approval, .job: true
        default: false
        }
    }
}

/// Why the PostgreSQL store could not open.
package struct PostgresStoreError: Error, CustomStringConvertible {
    /// What went wrong, for the operator.
    package var description: String
    /// Creates an error.
    package init(_ description: String) { self.description = description }
}
