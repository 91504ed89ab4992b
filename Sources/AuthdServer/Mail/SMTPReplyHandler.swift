import AuthKernel
import Foundation
import NIOCore

/// Turns the server's bytes into ``SMTPReply`` values, joining multi-line replies (`250-…` … `250 …`).
final class SMTPReplyHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private let continuation: AsyncThrowingStream<SMTPReply, any Error>.Continuation
    private var partial = ""
    private var pending: [String] = []
    private var phase = 0
    /// Lines one reply may have (an EHLO answer has a dozen).
    static let maxLines = 100

    init(_ continuation: AsyncThrowingStream<SMTPReply, any Error>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        partial += buffer.readString(length: buffer.readableBytes) ?? ""
        while let range = partial.range(of: "\r\n") ?? partial.range(of: "\n") {
            let line = String(partial[..<range.lowerBound])
            partial.removeSubrange(..<range.upperBound)
            guard line.count >= 3, let code = Int(line.prefix(3)) else {
                continuation.finish(throwing: MailError.transient("unreadable SMTP reply"))
                return
            }
            let separator = line.dropFirst(3).first
            pending.append(String(line.dropFirst(4)))
            guard pending.count <= Self.maxLines else {
                continuation.finish(throwing: MailError.transient("SMTP reply of more than \(Self.maxLines) lines"))
                return
            }
            if separator != "-" {
                continuation.yield(SMTPReply(code: code, lines: pending, phase: phase))
                pending = []
            }
        }
        if partial.utf8.count > 65_536 { continuation.finish(throwing: MailError.transient("SMTP reply line too long")) }
    }

    /// Forgets every byte received so far and starts a new phase: once STARTTLS is answered, nothing
    /// the server sent before the handshake may be taken for a reply (RFC 3207 §4.2), since a man in
    /// the middle could have put it there. Call on the channel's event loop, as TLS is added.
    /// - Returns: the new phase; replies of earlier phases are to be dropped.
    func discardReceived() -> Int {
        partial = ""
        pending = []
        phase += 1
        return phase
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish(throwing: MailError.transient("the SMTP server closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        continuation.finish(throwing: MailError.transient("\(error)"))
        context.close(promise: nil)
    }
}
