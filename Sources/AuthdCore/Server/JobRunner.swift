import AuthKernel
import AuthStorage
import Metrics
import Foundation
import ServiceLifecycle

/// Runs due jobs every few seconds until shutdown.
struct JobRunner: Service {
    let jobs: JobQueue
    let store: any AuthStore
    let interval: Duration

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            await jobs.runDue()
            // authd_jobs_pending{kind="mail"} is the mail queue's depth.
            var pending: [String: Int] = ["mail": 0]
            for job in (try? await jobs.pending()) ?? [] { pending[job.kind, default: 0] += 1 }
            for (kind, count) in pending { Gauge(label: "authd_jobs_pending", dimensions: [("kind", kind)]).record(count) }
            // Users and sessions (expired ones until the purge takes them), for dashboards.
            if let counts = try? await store.counts() {
                Gauge(label: "authd_users").record(counts.users)
                Gauge(label: "authd_sessions").record(counts.sessions)
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch { return }
        }
    }
}
