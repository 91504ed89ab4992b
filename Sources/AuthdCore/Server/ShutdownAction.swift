import ServiceLifecycle

/// Runs `action` when the server shuts down (closing an HTTP client, say).
struct ShutdownAction: Service {
    let action: @Sendable () async -> Void
    func run() async throws {
        try? await gracefulShutdown()
        await action()
    }
}
