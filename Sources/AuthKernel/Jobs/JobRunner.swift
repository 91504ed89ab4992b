import Foundation
import ServiceLifecycle

/// Runs due jobs every few seconds until shutdown.
struct JobRunner: Service {
    let jobs: JobQueue
    let interval: Duration

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            await jobs.runDue()
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch { return }
        }
    }
}
