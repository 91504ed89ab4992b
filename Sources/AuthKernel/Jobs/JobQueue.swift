public import Foundation
public import Logging
import Synchronization

/// A durable queue of retried background work. Providers register a handler per kind at start-up;
/// ``JobRunner`` runs due jobs, retrying failures with growing delays (1, 2, 4 … minutes, at most
/// six hours) up to ``maxAttempts``, then logs the job as failed and drops it.
public final class JobQueue: Sendable {
    /// Runs one job; throwing means "try again later".
    public typealias Handler = @Sendable (JobRecord) async throws -> Void

    let store: JournalStore
    let clock: any AuthClock
    let logger: Logger
    private let handlers = Mutex<[String: Handler]>([:])

    /// Attempts before a job is given up.
    public static let maxAttempts = 12

    /// Creates the queue.
    public init(store: JournalStore, clock: any AuthClock, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// Registers the handler for `kind` (one per kind).
    public func register(kind: String, handler: @escaping Handler) {
        handlers.withLock { $0[kind] = handler }
    }

    /// Stores a job to run as soon as the runner gets to it.
    @discardableResult
    public func enqueue(kind: String, payload: [String: JSONValue]) async throws -> JobRecord {
        let now = clock.now()
        let job = JobRecord(id: UUID(), kind: kind, payload: payload, attempts: 0, runAfter: now, createdAt: now)
        try await store.write { $0.put(job) }
        return job
    }

    /// Jobs waiting, soonest first.
    public func pending() async -> [JobRecord] {
        await store.read { $0.jobs.values.sorted { $0.runAfter < $1.runAfter } }
    }

    /// Runs every job that is due now, once each; returns how many succeeded.
    @discardableResult
    public func runDue() async -> Int {
        let now = clock.now()
        let due = await store.read { $0.jobs.values.filter { $0.runAfter <= now }.sorted { $0.runAfter < $1.runAfter } }
        var done = 0
        for job in due {
            guard let handler = handlers.withLock({ $0[job.kind] }) else { continue }
            do {
                try await handler(job)
                try await store.write { $0.deleteJob(id: job.id) }
                done += 1
            } catch {
                await reschedule(job, error: error)
            }
        }
        return done
    }

    private func reschedule(_ job: JobRecord, error: any Error) async {
        var next = job
        next.attempts += 1
        let meta: Logger.Metadata = ["job.kind": "\(job.kind)", "job.id": "\(job.id.lowercased)", "job.attempts": "\(next.attempts)", "error": "\(error)"]
        do {
            if next.attempts >= Self.maxAttempts {
                logger.error("background job failed for good; giving up", metadata: meta)
                try await store.write { $0.deleteJob(id: job.id) }
            } else {
                let delay = min(6 * 3600, 60 << min(next.attempts - 1, 16))
                next.runAfter = clock.now().addingTimeInterval(TimeInterval(delay))
                logger.warning("background job failed; will retry", metadata: meta.merging(["job.retry_in": "\(delay)s"]) { $1 })
                try await store.write { $0.put(next) }
            }
        } catch {
            logger.error("could not reschedule a background job", metadata: ["error": "\(error)"])
        }
    }
}
