import AuthStorage
import Foundation
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// The `outbox` transport: appends each message as one JSON line
/// `{"to","subject","text","html"?,"code"?,"template"?,"sent_at"}` to `DATA/outbox.jsonl` (mode 0600).
package struct OutboxMailTransport: MailTransport {
    /// Path of the outbox file.
    package let path: String

    /// Creates the transport writing to `path`.
    package init(path: String) { self.path = path }

    private struct Line: Encodable {
        var to: String
        var subject: String
        var text: String
        var html: String?
        var code: String?
        var template: String?
        var sentAt: String
        enum CodingKeys: String, CodingKey { case to, subject, text, html, code, template, sentAt = "sent_at" }
    }

    package func send(_ message: MailMessage, from: String) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = Line(
            to: message.to, subject: message.subject, text: message.text, html: message.html, code: message.code, template: message.template,
            sentAt: Timestamp.string(Date()))
        let bytes = [UInt8](try encoder.encode(line)) + [0x0A]
        let path = self.path
        // One write(2) with O_APPEND: lines from concurrent senders never interleave.
        try await NIOThreadPool.singleton.runIfActive {
            let fd = try DurableFile.openForAppend(path)
            defer { close(fd) }
            try DurableFile.writeAll(fd, bytes, path: path)
        }
    }
}
