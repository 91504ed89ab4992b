import AuthStorage
import Foundation
import Logging
import Metrics
import PostgresNIO
import Synchronization

/// A pooled connection that counts its round trips: the store's tests and the bench read the count
/// (contract §19: the hot writes take one round trip each).
struct CountedConnection {
    let connection: PostgresConnection
    let counter: RoundTripCounter

    /// Runs one statement: one round trip.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        counter.add()
        return try await connection.query(query, logger: logger)
    }

    /// Runs `body` between `BEGIN` and `COMMIT` (or `ROLLBACK` when it throws): two round trips more.
    func transaction<R>(logger: Logger, _ body: (CountedConnection) async throws -> R) async throws -> R {
        _ = try await query("BEGIN", logger: logger)
        counter.addTransaction()
        let result: R
        do {
            result = try await body(self)
        } catch {
            _ = try? await query("ROLLBACK", logger: logger)
            throw error
        }
        _ = try await query("COMMIT", logger: logger)
        return result
    }
}

/// Round trips to the database made by one store.
package final class RoundTripCounter: Sendable {
    private let value = Atomic<Int>(0)
    private let copyCount = Atomic<Int>(0)
    private let transactionCount = Atomic<Int>(0)
    /// `authd_store_round_trips_total`, so the bench can give round trips per request.
    static let metric = Counter(label: "authd_store_round_trips_total")

    /// A counter at zero.
    package init() {}
    /// Round trips so far.
    package var count: Int { value.load(ordering: .relaxed) }
    /// `COPY … FROM STDIN` statements so far (an import's).
    package var copies: Int { copyCount.load(ordering: .relaxed) }
    /// Transactions begun so far with `BEGIN`.
    package var transactions: Int { transactionCount.load(ordering: .relaxed) }
    func add() {
        value.add(1, ordering: .relaxed)
        Self.metric.increment()
    }
    func addCopy() { copyCount.add(1, ordering: .relaxed) }
    func addTransaction() { transactionCount.add(1, ordering: .relaxed) }
}

/// Why a connection could not be had: the database is away, or every pooled connection stayed busy
/// past `storage.postgres.acquire_timeout`.
struct ConnectionUnavailable: Error, CustomStringConvertible {
    var description: String
}

/// Leases pooled connections, waiting at most `acquireTimeout` (contract §19).
///
/// The pool itself waits for ever: with the database stopped it kept retrying its connects while
/// requests queued behind them. Here a wait that outlasts the timeout ends in the store's 503, counted
/// in `authd_store_acquire_timeouts_total`; and once a connection fails the way a database that went
/// away makes it fail, requests are refused at once until a probe connects again, so a restart or a
/// failover costs fast 503s rather than a queue of waits, and the instance comes back by itself.
final class PostgresLeases: Sendable {
    let client: PostgresClient
    let acquireTimeout: Duration
    let counter: RoundTripCounter
    let logger: Logger
    /// One connection of its own, for the probe.
    let probeConfiguration: PostgresConnection.Configuration
    /// Whether requests are refused at once (a probe runs until the database answers).
    private let away = Mutex<Bool>(false)

    static let acquireTimeouts = Counter(label: "authd_store_acquire_timeouts_total")
    static let refusedWhileAway = Counter(label: "authd_store_unreachable_total")

    init(client: PostgresClient, probe: PostgresConnection.Configuration, acquireTimeout: Duration, counter: RoundTripCounter, logger: Logger) {
        self.client = client
        self.probeConfiguration = probe
        self.acquireTimeout = acquireTimeout
        self.counter = counter
        self.logger = logger
    }

    /// Whether the database is known to be away.
    var isAway: Bool { away.withLock { $0 } }

    /// Who came first, the lease or the timeout: the loser hands back (or never uses) the connection.
    private final class Race: Sendable {
        private let winner = Mutex<Bool?>(nil)
        /// Whether the lease is the first to arrive.
        func leased() -> Bool { finish(leased: true) }
        /// Whether the timeout is the first to arrive.
        func timedOut() -> Bool { finish(leased: false) }
        private func finish(leased: Bool) -> Bool {
            winner.withLock { w in
                guard w == nil else { return false }
                w = leased
                return true
            }
        }
    }

    /// Runs `body` on a pooled connection leased within the acquire timeout.
    /// - Throws: ``ConnectionUnavailable`` when none came in time or the database is away; `body`'s errors.
    func withConnection<R: Sendable>(_ body: @Sendable (CountedConnection) async throws -> R) async throws -> R {
        if isAway {
            Self.refusedWhileAway.increment()
            throw ConnectionUnavailable(description: "the database is unreachable")
        }
        let race = Race()
        let (client, counter, timeout) = (self.client, self.counter, acquireTimeout)
        do {
            return try await withoutActuallyEscaping(body) { body in
                try await withThrowingTaskGroup(of: R?.self) { group in
                    group.addTask {
                        try await client.withConnection { connection -> R? in
                            // A lease that arrives after the timeout fired is handed straight back.
                            guard race.leased() else { throw CancellationError() }
                            return try await body(CountedConnection(connection: connection, counter: counter))
                        }
                    }
                    group.addTask {
                        try? await Task.sleep(for: timeout)
                        if race.timedOut() { throw ConnectionUnavailable(description: "no pooled connection within \(timeout)") }
                        return nil
                    }
                    // The body's answer, or the timer's refusal; the other task is then cancelled.
                    while let next = try await group.next() {
                        if let result = next {
                            group.cancelAll()
                            return result
                        }
                    }
                    throw CancellationError()
                }
            }
        } catch let error as ConnectionUnavailable {
            Self.acquireTimeouts.increment()
            logger.warning("no database connection within the acquire timeout", metadata: ["timeout": "\(timeout)"])
            markAwayIfUnreachable()
            throw error
        } catch {
            if Self.isConnectionLoss(error) { markAway(error) }
            throw error
        }
    }

    /// Whether `error` says the database itself went away (as opposed to a statement failing).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        let underlying = (error as? PostgresTransactionError).flatMap { $0.closureError ?? $0.commitError ?? $0.beginError } ?? error
        guard let psql = underlying as? PSQLError else { return false }
        switch psql.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            // Shutting down, starting up, a standby that cannot write.
            let state = psql.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("57P") || state == "25006"
        default:
            return false
        }
    }

    /// After a timeout: away only if a fresh connect fails too (a busy pool is not a lost database).
    private func markAwayIfUnreachable() {
        Task { [self] in
            if !(await probe()) { markAway(nil) }
        }
    }

    private func markAway(_ error: (any Error)?) {
        let first = away.withLock { was in
            defer { was = true }
            return !was
        }
        guard first else { return }
        logger.error("the database is unreachable; refusing requests until it answers", metadata: ["error": "\(error.map { String(reflecting: $0) } ?? "timeout")"])
        Task { [self] in
            // Every quarter second until a writable primary answers.
            while true {
                try? await Task.sleep(for: .milliseconds(250))
                if await probe() { break }
            }
            away.withLock { $0 = false }
            logger.notice("the database answers again")
        }
    }

    /// Whether a new connection (not the pool's, which may just be busy) reaches a database that can
    /// write: a promoted standby can, one still in recovery cannot.
    private func probe() async -> Bool {
        // Bounded as a whole, and not by a task group, which would wait for a query that is never
        // answered (a host gone silent): the probe is left behind and counts as failed.
        let answered = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let finish: @Sendable (Bool) -> Void = { value in
                let first = answered.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: value) }
            }
            Task { finish(await self.connectAndAsk()) }
            Task {
                try? await Task.sleep(for: .seconds(10))
                finish(false)
            }
        }
    }

    private func connectAndAsk() async -> Bool {
        var configuration = probeConfiguration
        // As long as a request would wait: a loaded machine that connects slowly is not a lost database.
        let wait = max(acquireTimeout, .seconds(2)).components
        configuration.options.connectTimeout = .milliseconds(wait.seconds * 1000 + wait.attoseconds / 1_000_000_000_000_000)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: Self.quiet)
            defer { Task { try? await connection.close() } }
            for try await recovering in try await connection.query("SELECT pg_is_in_recovery()", logger: Self.quiet).decode(Bool.self) {
                return !recovering
            }
            return false
        } catch {
            return false
        }
    }

    private static let quiet = Logger(label: "authd.store.probe", factory: { _ in SwiftLogNoOpLogHandler() })
}
