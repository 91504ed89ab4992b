import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import AuthKernel
import Foundation
import Logging
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
    static func run(_ action: AdminAction, _ target: DataFolderOptions) async throws {
        let output: AdminOutput
        if let answered = try askRunningServer(action, folder: target.folder) {
            output = answered
        } else {
            output = try await runDirectly(action, target)
        }
        FileHandle.standardOutput.write(Data(output.text.utf8))
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
    static func askRunningServer(_ action: AdminAction, folder: String) throws -> AdminOutput? {
        let fd = connect(folder: folder)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let body = try JSONEncoder().encode(action)
        let head = "POST /run HTTP/1.1\r\nHost: authd\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + Array(body)
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress! + sent, request.count - sent, 0) }
            guard n > 0 else { throw fail("the admin socket closed while the command was being sent") }
            sent += n
        }
        var response = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            response += chunk[0..<n]
        }
        guard let split = response.firstRange(of: Array("\r\n\r\n".utf8)),
            let output = try? JSONDecoder().decode(AdminOutput.self, from: Data(response[split.upperBound...]))
        else { throw fail("the server's admin socket gave an answer this command does not understand") }
        return output
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

    static func runDirectly(_ action: AdminAction, _ target: DataFolderOptions) async throws -> AdminOutput {
        let server = try await openDirectly(target)
        let output = await (try AdminOperations(server: server, dataFolder: target.folder)).run(action)
        await server.close()
        return output
    }

    /// Builds the server on the folder (store, keys, providers) without serving it.
    static func openDirectly(_ target: DataFolderOptions) async throws -> AuthServer {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "authd")
        do {
            let config = try ConfigLoading.load(path: target.config, dataFolder: target.folder)
            var options = AuthServer.Options(dataFolder: target.folder, config: config, logger: logger)
            options.adminSocket = false
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
