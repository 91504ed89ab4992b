package import AuthdServer
package import FileStore
package import AuthStorage
package import AuthKernel
import Foundation
package import Hummingbird
package import HummingbirdTesting
import Logging
import Synchronization

/// A server on a fresh temporary data folder, with a manual clock and captured logs.
package struct TestHarness: Sendable {
    /// The server.
    package let server: AuthServer
    /// The clock every service reads.
    package let clock: ManualClock
    /// The data folder.
    package let folder: String
    /// Everything logged.
    package let logs: LogCapture
    /// Disk fault injection.
    package let faults: StoreFaults

    /// The kernel services.
    package var kernel: Kernel { server.kernel }

    /// Builds a server; `config` is the JSON configuration file's text.
    package static func make(
        providers: [any AuthProvider.Type] = [], config: String = #"{"mail":{"transport":"outbox"}}"#, folder: String? = nil,
        clock: ManualClock = ManualClock(), store: (any AuthStore)? = nil, rateLimitCounters: (any RateLimitCounters)? = nil,
        keys: (any ServerKeys)? = nil, cluster: (any ClusterEvents)? = nil, decoyRecords: (any DecoyRecordStore)? = nil
    ) async throws -> TestHarness {
        let folder = folder ?? temporaryFolder()
        let logs = LogCapture()
        let registry = ProviderRegistry(providers)
        let parsed = try AuthConfig.parse(Data(config.utf8), host: "127.0.0.1", port: 0, availableProviders: registry.ids, defaultProviders: registry.defaultIDs)
        var options = AuthServer.Options(dataFolder: folder, host: "127.0.0.1", port: 0, config: parsed, logger: logs.logger())
        options.clock = clock
        let faults = StoreFaults()
        options.faults = faults
        options.store = store
        options.rateLimitCounters = rateLimitCounters
        options.keys = keys
        options.cluster = cluster
        options.decoyRecords = decoyRecords
        let server = try await AuthServer.make(options, registry: registry)
        return TestHarness(server: server, clock: clock, folder: folder, logs: logs, faults: faults)
    }

    /// Runs `body` against the router (no sockets), then closes the store.
    package func test<R: Sendable>(_ body: @Sendable (any TestClientProtocol) async throws -> R) async throws -> R {
        do {
            let result = try await server.application.test(.router, body)
            await server.close()
            return result
        } catch {
            await server.close()
            throw error
        }
    }

    /// Signs a user in directly through the kernel, with identity `("test", subject)`.
    package func signIn(_ subject: String = "someone", email: String? = nil, device: String? = nil) async throws -> SessionResponse {
        let user = try await kernel.users.signIn(
            .init(identity: Identity(provider: "test", subject: subject), email: email, emailVerified: email != nil), linkingTo: nil
        )
        return try await kernel.sessions.signIn(user, amr: ["test"], device: try DeviceInfo(name: device, platform: nil))
    }

    /// Lines of `DATA/outbox.jsonl`, decoded.
    package func outbox() throws -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: folder + "/outbox.jsonl") else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

/// A new empty folder under the system's temporary directory, removed when the test process exits
/// (a full run made a few hundred, data folders with keys among them, and left them all behind).
package func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "authd-test-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    TemporaryFolders.made.withLock { made in
        if made.isEmpty { atexit { TemporaryFolders.removeAll() } }
        made.append(path)
    }
    return path
}

/// The folders ``temporaryFolder()`` made in this process.
enum TemporaryFolders {
    static let made = Mutex<[String]>([])

    static func removeAll() {
        for path in made.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
