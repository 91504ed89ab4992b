public import AuthStorage
import Foundation
package import Logging
import Metrics
import Synchronization

/// A durable queue of retried background work. Providers register a handler per kind at start-up;
/// `JobRunner` runs due jobs, retrying failures with doubling delays (from the kind's base delay,
/// at most six hours) up to the kind's attempt limit, then logs the job as failed and drops it.
public final class JobQueue: Sendable {
    /// Runs one job; throwing means "try again later", throwing ``PermanentFailure`` "give up now".
    public typealias Handler = @Sendable (JobRecord) async throws -> Void

    /// How a kind of job is retried.
    public struct RetryPolicy: Sendable {
        /// Attempts before giving up.
        public var maxAttempts: Int
        /// Delay after the first failure, seconds; it doubles after each further one.
        public var baseDelay: Int
        /// Twelve attempts from one minute: about a day and a half in all.
        public static let standard = RetryPolicy(maxAttempts: 12, baseDelay: 60)
        /// Creates a policy.
        package init(maxAttempts: Int, baseDelay: Int) {
            self.maxAttempts = maxAttempts
            self.baseDelay = baseDelay
        }
    }

    /// Thrown by a handler when retrying cannot help (e.g. the server refused the message for good).
    public struct PermanentFailure: Error, CustomStringConvertible {
        /// Why.
        public var description: String
        /// Creates the error.
        package init(_ description: String) { self.description = description }
    }

    let store: any AuthStore
    let clock: any AuthClock
    let logger: Logger
    private let handlers = Mutex<[String: (policy: RetryPolicy, run: Handler)]>([:])
    private let running = Mutex<Set<UUID>>([])
    /// How long a claimed job is left to the instance running it before another may try (shared stores).
    static let lease: TimeInterval = 300

    /// Creates the queue.
    package init(store: any AuthStore, clock: any AuthClock, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// Registers the handler for `kind` (one per kind).
    public func register(kind: String, policy: RetryPolicy = .standard, handler: @escaping Handler) {
        handlers.withLock { $0[kind] = (policy, handler) }
    }

    /// Changes the retry policy of a registered kind (a reload).
    package func setPolicy(kind: String, _ policy: RetryPolicy) {
        handlers.withLock { if let h = $0[kind] { $0[kind] = (policy, h.1) } }
    }

    /// Stores a job to run as soon as the runner gets to it.
    @discardableResult
    public func enqueue(kind: String, payload: [String: JSONValue]) async throws -> JobRecord {
        let now = clock.now()
        let job = JobRecord(id: SecureRandom.uuid(), kind: kind, payload: payload, attempts: 0, runAfter: now, createdAt: now)
        try await store.write([]) { $0.put(job) }
        enqueued.add(1, ordering: .relaxed)
        return job
    }

    /// A job to store in a write of the caller's own, beside what it belongs to (then ``run(_:claimed:)``
    /// it, or leave it to the runner).
    ///
    /// `claimed`: the caller runs it at once with `run(job, claimed: true)`. On a shared store it is
    /// then stored as already claimed by this instance, which saves the claim's write; another
    /// instance takes it up only if this one has not finished it within the lease (it stopped).
    package func record(kind: String, payload: [String: JSONValue], claimed: Bool = false) -> JobRecord {
        let now = clock.now()
        enqueued.add(1, ordering: .relaxed)
        let runAfter = claimed && store.isShared ? now.addingTimeInterval(Self.lease) : now
        return JobRecord(id: SecureRandom.uuid(), kind: kind, payload: payload, attempts: 0, runAfter: runAfter, createdAt: now)
    }

    /// Stores a job that this instance runs at once with `run(job, claimed: true)` (see
    /// ``record(kind:payload:claimed:)``).
    package func enqueueClaimed(kind: String, payload: [String: JSONValue]) async throws -> JobRecord {
        let job = record(kind: kind, payload: payload, claimed: true)
        try await store.write([]) { $0.put(job) }
        return job
    }

    /// Jobs this process has queued since it started (for tests that count the work an answer did).
    package var enqueuedCount: Int { enqueued.load(ordering: .relaxed) }
    private let enqueued = Atomic<Int>(0)

    /// Jobs waiting, soonest first.
    package func pending() async throws -> [JobRecord] {
        try await store.read([.allJobs]) { $0.jobs.values.sorted { $0.runAfter < $1.runAfter } }
    }

    /// Runs every job that is due now, once each; returns how many succeeded.
    @discardableResult
    public func runDue() async -> Int {
        let now = clock.now()
        guard let due = try? await store.read([.allJobs], { $0.jobs.values.filter { $0.runAfter <= now }.sorted { $0.runAfter < $1.runAfter } }) else {
            return 0
        }
        var done = 0
        for job in due where await run(job) { done += 1 }
        return done
    }

    /// Runs one job now unless it is already running; returns whether it succeeded (and is gone).
    /// `claimed`: this instance stored it claimed (``record(kind:payload:claimed:)``), just now.
    @discardableResult
    package func run(_ job: JobRecord, claimed: Bool = false) async -> Bool {
        guard let handler = handlers.withLock({ $0[job.kind] }) else { return false }
        guard running.withLock({ $0.insert(job.id).inserted }) else { return false }
        defer { _ = running.withLock { $0.remove(job.id) } }
        // It may have finished or been dropped while we were not looking, or (with a shared store)
        // another instance may be running it: a shared store's claim pushes `runAfter` out by a lease.
        let now = clock.now()
        let shared = store.isShared
        let current: JobRecord?
        if claimed && shared {
            current = job  // stored claimed by this instance a moment ago
        } else if shared {
            current = try? await store.write([.job(job.id)]) { state -> JobRecord? in
                guard var current = state.jobs[job.id], current.runAfter <= now else { return nil }
                let original = current
                current.runAfter = now.addingTimeInterval(Self.lease)
                state.put(current)
                return original
            }
        } else {
            // Alone on the store, the `running` set is the claim: a read finds the job, no write is needed.
            current = try? await store.read([.job(job.id)]) { $0.jobs[job.id] }
        }
        guard let current else { return false }
        do {
            try await handler.run(current)
            try await store.write([.job(job.id)]) { $0.deleteJob(id: job.id) }
            return true
        } catch {
            await reschedule(current, policy: handler.policy, error: error)
            return false
        }
    }

    private func reschedule(_ job: JobRecord, policy: RetryPolicy, error: any Error) async {
        var next = job
        next.attempts += 1
        let meta: Logger.Metadata = ["job.kind": "\(job.kind)", "job.id": "\(job.id.lowercased)", "job.attempts": "\(next.attempts)", "error": "\(error)"]
        do {
            let givingUp = error is PermanentFailure || next.attempts >= policy.maxAttempts
            Counter(label: "authd_job_failures_total", dimensions: [("kind", job.kind), ("outcome", givingUp ? "dropped" : "retried")]).increment()
            if givingUp {
                logger.error("background job failed for good; giving up", metadata: meta)
                try await store.write([.job(job.id)]) { $0.deleteJob(id: job.id) }
            } else {
                let delay = min(6 * 3600, policy.baseDelay << min(next.attempts - 1, 16))
                next.runAfter = clock.now().addingTimeInterval(TimeInterval(delay))
                logger.warning("background job failed; will retry", metadata: meta.merging(["job.retry_in": "\(delay)s"]) { $1 })
                try await store.write([.job(job.id)]) { [next] in $0.put(next) }
            }
        } catch {
            logger.error("could not reschedule a background job", metadata: ["error": "\(error)"])
        }
    }
}
