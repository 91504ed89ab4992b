import Foundation
import NIOPosix

/// The `sendmail` transport: pipes the message to `mail.sendmail.path -t -i`; a non-zero exit is a failure.
public struct SendmailTransport: MailTransport {
    /// The program.
    public let path: String

    /// Creates the transport.
    public init(path: String) { self.path = path }

    public func send(_ message: MailMessage, from: String) async throws {
        // Local mailers take native line ends.
        let composed = try MailComposer.compose(message, from: from).replacingOccurrences(of: "\r\n", with: "\n")
        let path = self.path
        try await NIOThreadPool.singleton.runIfActive {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["-t", "-i"]
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            do { try process.run() } catch { throw MailError.transient("cannot run \(path): \(error)") }
            input.fileHandleForWriting.write(Data(composed.utf8))
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw MailError.transient("\(path) exited with \(process.terminationStatus): \(stderr.prefix(200))")
            }
        }
    }
}
