import AuthKernel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The admin endpoint of a running server: HTTP on the Unix socket `DATA/admin.sock` (mode 0600, in
/// the 0700 data folder, never on TCP). `POST /run` takes an ``AdminAction`` and answers its
/// ``AdminOutput``; asked with `Accept: application/x-ndjson`, it first streams the command's
/// ``AdminProgress`` reports, one JSON line each.
package enum AdminSocket {
    /// Sockets paths longer than this do not fit `sockaddr_un`.
    package static let maxPathLength = 100

    package static func path(dataFolder: String) -> String { dataFolder + "/admin.sock" }

    /// The answer's type when the client asks for progress (`Accept`): one JSON object per line.
    package static let streamedType = "application/x-ndjson"

    /// One line of a streamed answer: `{"progress":{…}}` as the command works, `{"output":{…}}` last.
    package struct StreamedLine: Codable, Sendable {
        package var progress: AdminProgress?
        package var output: AdminOutput?
    }

    /// The socket's server, or nil (with a warning) when the path is too long for a Unix socket.
    /// - Parameter onRunning: called once the socket accepts connections (with its mode set).
    static func service(
        dataFolder: String, operations: AdminOperations, logger: Logger, onRunning: @escaping @Sendable () async -> Void
    ) -> (any Service)? {
        let path = Self.path(dataFolder: dataFolder)
        guard path.utf8.count <= maxPathLength else {
            logger.warning("no admin socket: its path is too long for a Unix socket; admin commands need the server stopped", metadata: ["path": "\(path)"])
            return nil
        }
        unlink(path)  // left by a crash; the folder lock is ours, so no live server owns it
        // bind(2) creates the socket with the umask's mode, and the chmod below comes after it: with
        // a loose umask it was briefly connectable by anyone who could reach the folder. Every file
        // authd makes is private, so the process keeps this umask.
        umask(0o077)
        let router = Router()
        router.post("run") { request, context -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let action = try JSONDecoder().decode(AdminAction.self, from: Data(body.readableBytesView))
            guard request.headers[.accept] == streamedType else {
                let bytes = try JSONEncoder().encode(await operations.run(action))
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
            // The CLI on a terminal: progress lines as the command works, then its output.
            let (lines, continuation) = AsyncStream.makeStream(of: StreamedLine.self, bufferingPolicy: .bufferingNewest(64))
            let work = Task {
                let output = await operations.run(action) { continuation.yield(StreamedLine(progress: $0)) }
                continuation.yield(StreamedLine(output: output))
                continuation.finish()
            }
            return Response(
                status: .ok, headers: [.contentType: streamedType],
                body: ResponseBody { writer in
                    // A CLI that goes away (Ctrl-C) does not stop the command: it finishes on the server.
                    for await line in lines {
                        var bytes = try JSONEncoder().encode(line)
                        bytes.append(0x0A)
                        try await writer.write(ByteBuffer(bytes: bytes))
                    }
                    _ = await work.value
                    try await writer.finish(nil)
                }
            )
        }
        return Application(
            router: router,
            configuration: .init(address: .unixDomainSocket(path: path), serverName: "authd-admin"),
            onServerRunning: { _ in
                chmod(path, 0o600)
                await onRunning()
            },
            logger: logger
        )
    }
}
