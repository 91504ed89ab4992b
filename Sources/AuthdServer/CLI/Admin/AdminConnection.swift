import AuthdCore
import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import AsyncHTTPClient
import AuthKernel
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresStore

/// Where an admin command works: `--data` (and `--config` for direct mode).
struct DataFolderOptions: ParsableArguments {
    @Option(help: "Data folder of the server. Default $AUTHD_DATA or ./data.")
    var data: String?

    @Option(help: "Configuration file, used when no server is running. Default DATA/authd.json when it exists.")
    var config: String?

    var folder: String { data ?? ProcessInfo.processInfo.environment["AUTHD_DATA"] ?? "./data" }
}

/// Runs an admin action on a running server over `DATA/admin.sock`, or, when none answers, on the
/// data folder itself under its lock. Either way the same code produces the output.
enum AdminConnection {
    /// Runs the action and prints its output; on a terminal, its progress is drawn on standard error.
    static func run(_ action: AdminAction, _ target: DataFolderOptions) async throws {
        let line = ProgressLine.onTerminal()
        let progress = line?.sink
        let output: AdminOutput
        do {
            if let answered = try await askRunningServer(action, folder: target.folder, progress: progress) {
                output = answered
            } else {
                output = try await runDirectly(action, target, progress: progress)
            }
        } catch {
            line?.finish()
            throw error
        }
        line?.finish()
        try show(output)
    }

    /// Prints an output: its text on standard output, its note (a reminder, or why it failed) on
    /// standard error; a failure's exit code.
    static func show(_ output: AdminOutput) throws {
        FileHandle.standardOutput.write(Data(output.text.utf8))
        if let note = output.note { FileHandle.standardError.write(Data("authd: \(note)\n".utf8)) }
        if output.exitCode != 0 { throw ExitCode(output.exitCode) }
    }

    /// Whether a server answers on the folder's admin socket.
    static func serverIsRunning(folder: String) -> Bool {
        let fd = connect(folder: folder)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    // MARK: The running server

    /// The server's answer, or nil when no server listens on the socket.
    /// - Parameter progress: when given, the server streams progress lines (``AdminSocket/streamedType``) before the output.
    static func askRunningServer(_ action: AdminAction, folder: String, progress: AdminProgressSink? = nil) async throws -> AdminOutput? {
        guard serverIsRunning(folder: folder) else { return nil }
        guard let url = URL(httpURLWithSocketPath: AdminSocket.path(dataFolder: folder), uri: "/run") else {
            throw fail("the admin socket's path \(folder)/admin.sock cannot be used")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if progress != nil { request.headers.add(name: "Accept", value: AdminSocket.streamedType) }
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(action)))
        struct Unreadable: Error {}
        do {
            // No deadline: an import of a million users into a database runs for minutes.
            let response = try await HTTPClient.shared.execute(request, deadline: .distantFuture)
            guard response.status == .ok else { throw Unreadable() }
            guard let progress else {
                let body = try await response.body.collect(upTo: 1 << 30)
                guard let output = try? JSONDecoder().decode(AdminOutput.self, from: Data(body.readableBytesView)) else { throw Unreadable() }
                return output
            }
            var pending = [UInt8]()
            for try await part in response.body {
                pending += part.readableBytesView
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = try? JSONDecoder().decode(AdminSocket.StreamedLine.self, from: Data(pending[..<newline]))
                    pending.removeSubrange(...newline)
                    if let output = line?.output { return output }
                    if let report = line?.progress { progress(report) }
                }
            }
            throw Unreadable()
        } catch is Unreadable {
            throw fail("the server's admin socket gave an answer this command does not understand")
        } catch {
            throw fail("the admin socket failed: \(error)")
        }
    }

    private static func connect(folder: String) -> Int32 {
        let path = folder + "/admin.sock"
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return -1 }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if rc != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    // MARK: The folder itself

    static func runDirectly(_ action: AdminAction, _ target: DataFolderOptions, progress: AdminProgressSink? = nil) async throws -> AdminOutput {
        let server = try await openDirectly(target) { config in
            // An import writes the whole store batch by batch: compacting as the journal grows would
            // snapshot an ever larger store again and again. Closing writes one snapshot.
            if case .importBundle = action { config.storage.compactAfterBytes = 1 << 40 }
        }
        let output = await (try AdminOperations(server: server, dataFolder: target.folder)).run(action, progress: progress)
        await server.close()
        return output
    }

    /// Builds the server on the folder (store, keys, providers) without serving it.
    static func openDirectly(_ target: DataFolderOptions, tuning: (inout AuthConfig) -> Void = { _ in }) async throws -> AuthServer {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "authd")
        do {
            var config = try ConfigLoading.load(path: target.config, dataFolder: target.folder)
            tuning(&config)
            var options = AuthServer.Options(dataFolder: target.folder, config: config, logger: logger)
            options.adminSocket = false
            options.addFullServerParts()
            try await PostgresBackend.configure(&options)
            return try await AuthServer.make(options, registry: Authd.providers)
        } catch StoreError.locked {
            throw fail("authd serve is running on \(target.folder) but its admin socket (\(target.folder)/admin.sock) did not answer")
        } catch let error as ConfigError {
            throw fail("configuration error: \(error.message)")
        } catch let error as StoreError {
            throw fail("\(error)")
        } catch let error as PostgresStoreError {
            throw fail("\(error)")
        }
    }

    /// Prints `authd: message` to standard error and gives the exit code to throw; every command fails this way.
    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("authd: \(message)\n".utf8))
        return ExitCode(1)
    }
}
