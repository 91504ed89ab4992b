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
/// column, with the columns the queries, uniqueness constraints and cascades need beside it. A read
/// loads the rows its ``StoreKey``s name into a fresh ``StoreState``; a write does the same inside a
/// transaction with `SELECT … FOR UPDATE`, runs the body (the same pure rules as the file store), and
/// writes back the changes the body made. A concurrent write that a row lock cannot see coming (two
/// sign-ins creating the same new email) fails a unique constraint: the transaction is retried, so the
/// body then sees the other's row, and a clash that remains becomes the contract's 409.
package final class PostgresStore: AuthStore {
    /// The connection pool (for admin commands and tests; the store itself goes through read/write).
    package let client: PostgresClient
    /// The logger for database requests.
    package let logger: Logger
    private let runner: Task<Void, Never>

    /// Attempts of a write that lost a race (serialization failure, deadlock, unique violation).
    static let maxAttempts = 5

    private init(client: PostgresClient, runner: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.runner = runner
        self.logger = logger
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
        var configuration = try PostgresURL(settings).client
        configuration.options.maximumConnections = settings.poolSize
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        // Started at once, so the first query does not find the pool not yet running.
        let runner = Task.immediate { await client.run() }
        return PostgresStore(client: client, runner: runner, logger: logger)
    }

    /// The schema version this build needs.
    package static var requiredSchemaVersion: Int { Migrations.latest }

    /// Applies every migration the database lacks; returns the versions applied.
    package func migrate() async throws -> [Int] {
        try await Migrations.apply(client, logger: logger)
    }

    // MARK: AuthStore

    /// Rows of several instances: background jobs are claimed through the database.
    package var isShared: Bool { true }

    /// Writable while the database answers.
    package var isWritable: Bool {
        get async { (try? await client.query("SELECT 1", logger: logger)) != nil }
    }

    package func read<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (StoreState) throws -> R) async throws -> R {
        let state: StoreState
        do {
            state = try await client.withConnection { connection in
                var state = StoreState()
                try await PostgresRecords.load(keys, into: &state, on: connection, logger: logger)
                return state
            }
        } catch {
            throw unavailable(error)
        }
        return try body(state)
    }

    package func write<R: Sendable>(
        _ keys: [StoreKey], durability: WriteDurability, _ body: @Sendable (inout StoreState) throws -> R
    ) async throws -> R {
        var attempt = 0
        while true {
            attempt += 1
            do {
                let outcome: Result<R, any Error> = try await client.withTransaction(logger: logger) { connection in
                    var state = StoreState()
                    for key in keys { try await PostgresRecords.load(key, into: &state, on: connection, lock: true, logger: logger) }
                    // The body's own error is returned, not thrown, so what it changed before throwing is committed.
                    let outcome: Result<R, any Error>
                    do { outcome = .success(try body(&state)) } catch { outcome = .failure(error) }
                    // Every commit is durable, `.eventual` ones too: a commit costs the same for a known account
                    // as for an unknown one (the refusal floors cover the decoys), and nothing is lost on a crash.
                    let changes = state.takeChanges(wholeRecords: true)
                    for change in changes { try await PostgresRecords.apply(change, on: connection, logger: logger) }
                    return outcome
                }
                return try outcome.get()
            } catch let error as PostgresTransactionError {
                let underlying = error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError
                if let sqlError = underlying as? PSQLError, let sqlState = sqlError.serverInfo?[.sqlState] {
                    if Self.retried.contains(sqlState), attempt < Self.maxAttempts { continue }
                    if sqlState == "23505" { throw Self.conflict(constraint: sqlError.serverInfo?[.constraintName]) }
                }
                throw unavailable(underlying ?? error)
            } catch let error as PSQLError {
                throw unavailable(error)
            }
        }
    }

    /// One transaction for every batch, the count reported every thousand records.
    package func load(streaming produce: @Sendable (_ store: @Sendable ([StoreChange]) async throws -> Void) async throws -> Void, stored: @Sendable @escaping (Int) -> Void) async throws {
        let count = LoadCount()
        let logger = self.logger
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await produce { batch in
                    var state = StoreState()
                    for change in batch { state.replay(change) }
                    for row in state.takeChanges(wholeRecords: true) {
                        try await PostgresRecords.apply(row, on: connection, logger: logger)
                        let done = count.add(1)
                        if done % 1000 == 0 { stored(done) }
                    }
                }
            }
        } catch let error as PostgresTransactionError {
            throw unavailable(error.closureError ?? error.commitError ?? error.beginError ?? error)
        }
        stored(count.add(0))
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
        logger.error("database request failed", metadata: ["error": "\(String(reflecting: error))"])
        return StoreError.unavailable
    }

    /// Every write was durable when it returned (commits are synchronous).
    package func waitUntilDurable() async throws {}

    package func counts() async throws -> StoreCounts {
        do {
            let rows = try await client.query("SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM sessions)", logger: logger)
            for try await (users, sessions) in rows.decode((Int, Int).self) { return StoreCounts(users: users, sessions: sessions) }
            return StoreCounts(users: 0, sessions: 0)
        } catch {
            throw unavailable(error)
        }
    }

    package func close() async {
        runner.cancel()
        _ = await runner.value
    }
}

/// Why the PostgreSQL store could not open.
package struct PostgresStoreError: Error, CustomStringConvertible {
    /// What went wrong, for the operator.
    package var description: String
    /// Creates an error.
    package init(_ description: String) { self.description = description }
}
