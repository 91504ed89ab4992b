import ServiceLifecycle
import Synchronization

/// The port a harness's server bound (`--port 0` picks one), known once it listens.
final class ListeningPort: Sendable {
    private let state = Mutex<(port: Int?, waiting: [CheckedContinuation<Int, Never>])>((nil, []))

    /// Takes the server's `http://127.0.0.1:PORT`.
    func set(_ url: String) {
        guard let port = url.split(separator: ":").last.flatMap({ Int($0) }) else { return }
        let waiting = state.withLock { state -> [CheckedContinuation<Int, Never>] in
            state.port = port
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: port) }
    }

    /// The port, once the server listens.
    func port() async -> Int {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state -> Int? in
                if let port = state.port { return port }
                state.waiting.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}

/// A service that says when the group runs it: the group has started.
struct StartedSignal: Service {
    let continuation: AsyncStream<Void>.Continuation

    func run() async throws {
        continuation.finish()
        try? await gracefulShutdown()
    }
}
