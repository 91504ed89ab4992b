import Foundation
import NIOPosix

/// The `sendmail` transport: pipes the message to `mail.sendmail.path -t -i`; a non-zero exit is a failure.
package struct SendmailTransport: MailTransport {
    /// The program.
    package let path: String

    /// Creates the transport.
    package init(path: String) { self.path = path }

    package func send(_ message: MailMessage, from: String) async throws {
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
            // A program that exits without reading closes the pipe: that is its exit status's business.
            let written = Result { try input.fileHandleForWriting.write(contentsOf: Data(composed.utf8)) }
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            if case .failure(let error) = written, process.terminationStatus == 0 {
                throw MailError.transient("\(path) did not take the message: \(error)")
            }
            guard process.terminationStatus == 0 else {
                let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw MailError.transient("\(path) exited with \(process.terminationStatus): \(stderr.prefix(200))")
            }
        }
    }
}
