import AuthKernel
import Logging
import ServiceLifecycle

/// Deletes anonymous users with nothing linked once ``AnonymousSettings/ttl`` has passed since their
/// last session ended (``UserService/purgeAnonymous(idleFor:)``), every ten minutes.
struct AnonymousUserPurge: Service {
    let kernel: Kernel
    let ttl: Int

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(600)) }
            } catch { return }
            do {
                try await kernel.users.purgeAnonymous(idleFor: ttl)
            } catch {
                kernel.logger.warning("could not purge idle anonymous users", metadata: ["error": "\(error)"])
            }
        }
    }
}
