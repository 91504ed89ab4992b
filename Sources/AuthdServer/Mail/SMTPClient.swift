import AuthKernel
import AuthStorage
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Delivers one message per connection: EHLO, STARTTLS (or implicit TLS), AUTH PLAIN or LOGIN,
/// MAIL FROM, RCPT TO, DATA with dot-stuffing, QUIT. Every step has a time limit; a 4xx reply or a
/// network failure is ``MailError/transient(_:)``, a 5xx reply ``MailError/permanent(_:)``.
struct SMTPClient: Sendable {
    let settings: SMTPSettings
    let group: any EventLoopGroup

    init(settings: SMTPSettings, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.settings = settings
        self.group = group
    }

    func send(_ message: String, from: String, to: String) async throws {
        let tls = try makeTLSContext()
        // A server has one reply outstanding at a time; more are kept up to a few, not without bound.
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SMTPReply.self, bufferingPolicy: .bufferingOldest(8))
        let replyHandler = SMTPReplyHandler(continuation)
        let host = settings.host
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(Int64(settings.timeout)))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if self.settings.security == .tls {
                            try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host)))
                        }
                        try channel.pipeline.syncOperations.addHandler(replyHandler)
                    }
                }
                .connect(host: host, port: settings.port).get()
        } catch {
            throw MailError.transient("cannot connect to \(host):\(settings.port): \(error)")
        }
        let session = Session(channel: channel, replies: stream.makeAsyncIterator(), timeout: .seconds(Int64(settings.timeout)))
        defer { channel.close(promise: nil) }
        try await session.expect(220)
        var capabilities = try await session.command("EHLO \(settings.helo)", expect: 250).lines
        if settings.security == .starttls {
            guard capabilities.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                throw MailError.permanent("\(host) does not offer STARTTLS")
            }
            try await session.command("STARTTLS", expect: 220)
            // Whatever came in plaintext after the 220 is dropped, in the same step as TLS begins.
            session.phase = try await channel.eventLoop.submit {
                let phase = replyHandler.discardReceived()
                try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host)), position: .first)
                return phase
            }.get()
            capabilities = try await session.command("EHLO \(settings.helo)", expect: 250).lines
        }
        if let user = settings.username, let password = settings.password {
            let mechanisms = capabilities.first { $0.uppercased().hasPrefix("AUTH") }?.uppercased().split(separator: " ").map(String.init) ?? []
            if mechanisms.contains("PLAIN") || !mechanisms.contains("LOGIN") {
                let credentials = Data("\u{0}\(user)\u{0}\(password)".utf8).base64EncodedString()
                try await session.command("AUTH PLAIN \(credentials)", expect: 235, secret: true)
            } else {
                try await session.command("AUTH LOGIN", expect: 334)
                try await session.command(Data(user.utf8).base64EncodedString(), expect: 334, secret: true)
                try await session.command(Data(password.utf8).base64EncodedString(), expect: 235, secret: true)
            }
        }
        try await session.command("MAIL FROM:<\(from)>", expect: 250)
        try await session.command("RCPT TO:<\(to)>", expect: 250)
        try await session.command("DATA", expect: 354)
        try await session.command(Self.dotStuffed(message) + "\r\n.", expect: 250)
        _ = try? await session.command("QUIT", expect: 221)
    }

    /// Lines starting with "." get another one (RFC 5321 §4.5.2); bare LFs become CRLF.
    static func dotStuffed(_ message: String) -> String {
        message.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") ? "." + $0 : String($0) }
            .joined(separator: "\r\n")
    }

    /// SNI cannot carry an IP address.
    static func sniName(_ host: String) -> String? {
        host.allSatisfy({ $0.isNumber || $0 == "." }) || host.contains(":") ? nil : host
    }

    func makeTLSContext() throws -> NIOSSLContext {
        var config = TLSConfiguration.makeClientConfiguration()
        config.certificateVerification = .fullVerification
        if let caFile = settings.caFile {
            config.additionalTrustRoots = [.file(caFile)]
        }
        do { return try NIOSSLContext(configuration: config) } catch {
            throw MailError.permanent("cannot set up TLS: \(error)")
        }
    }

    /// A command/reply exchange with a time limit on each reply: when it passes, the connection is closed.
    final class Session: @unchecked Sendable {
        let channel: any Channel
        var replies: AsyncThrowingStream<SMTPReply, any Error>.AsyncIterator
        let timeout: TimeAmount
        /// Replies from earlier phases (plaintext before STARTTLS) are skipped.
        var phase = 0

        init(channel: any Channel, replies: AsyncThrowingStream<SMTPReply, any Error>.AsyncIterator, timeout: TimeAmount) {
            self.channel = channel
            self.replies = replies
            self.timeout = timeout
        }

        func next() async throws -> SMTPReply {
            let channel = self.channel
            let timer = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
            defer { timer.cancel() }
            do {
                while true {
                    guard let reply = try await replies.next() else { throw MailError.transient("the SMTP server closed the connection") }
                    if reply.phase >= phase { return reply }
                }
            } catch let error as MailError {
                throw error
            } catch {
                throw MailError.transient("\(error)")
            }
        }

        func expect(_ code: Int) async throws {
            let reply = try await next()
            guard reply.code == code else { throw reply.failure }
        }

        @discardableResult
        func command(_ line: String, expect code: Int, secret: Bool = false) async throws -> SMTPReply {
            do {
                try await channel.writeAndFlush(ByteBuffer(string: line + "\r\n"))
            } catch {
                // The reason the channel closed (a failed TLS handshake, say) says more than the write error.
                _ = try await next()
                throw MailError.transient("cannot write to the SMTP server: \(error)")
            }
            let reply = try await next()
            guard reply.code == code else {
                throw reply.isPositive ? MailError.permanent("unexpected reply \(reply)") : reply.failure
            }
            return reply
        }
    }
}

// It holds the SMTP password: a log line or a `dump` shows its name only (contract §17).
extension SMTPClient: RedactedDescription {}
