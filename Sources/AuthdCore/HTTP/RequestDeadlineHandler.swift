import AuthKernel
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Fired into the request's part stream when its deadline passes, so a body being read throws
/// instead of ending early (Hummingbird's body iterator takes a finished stream for `.end`).
struct RequestTimeoutError: HTTPResponseError {
    var status: HTTPResponse.Status { .requestTimeout }

    /// The contract's error shape, with authd's own code for this status.
    static let error = AuthError(
        status: .requestTimeout, code: "REQUEST_TIMEOUT", message: "The request took longer than http.request_timeout to arrive."
    )
    static let body = error.body

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try Self.error.response(from: request, context: context)
    }
}

/// `http.request_timeout`: bounds how long one request's head and body may take to arrive, from its
/// first byte to its `.end`, however steadily bytes trickle in (`http.idle_timeout` restarts on every
/// byte, so a body trickled a byte a second stayed open forever). A response in progress, such as the
/// approvals event stream, is never timed.
///
/// Installed through `HTTP1Channel.Configuration.additionalChannelHandlers`, after the HTTP codec; it
/// puts a ``RequestStartWatcher`` in front of the decoder to see a request's first raw byte. On expiry
/// it answers 408 when it can (the head was read and nothing else is owed), else just closes.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State { case idle, receiving, timedOut }
    private let timeout: TimeAmount
    private var state = State.idle
    private var sawHead = false     // the request being received has been parsed up to its head
    private var unanswered = 0      // request heads received whose response `.end` has not gone out
    private var responding = false  // a response head has gone out, its `.end` not yet
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // An HTTP/2 stream (a child of a connection, itself a child of the listener) carries frames, not
        // bytes: its clock starts at the head; HTTP/2's own timeouts guard the connection.
        guard context.channel.parent?.parent == nil else { return }
        // First in the pipeline: sees raw bytes before ByteToMessageHandler(HTTPRequestDecoder) buffers them.
        try? context.pipeline.syncOperations.addHandler(RequestStartWatcher(deadline: self), position: .first)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.cancelTimer()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.cancelTimer()
        context.fireChannelInactive()
    }

    /// Raw bytes arrived (from the watcher): between requests, any byte but CR/LF begins one.
    func bytesArrived(_ bytes: ByteBuffer) {
        guard self.state == .idle, let context,
            bytes.readableBytesView.contains(where: { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") })
        else { return }
        self.start(context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.state {
        case .timedOut:
            return  // answered already; nothing more goes up
        case .idle, .receiving:
            switch Self.unwrapInboundIn(data) {
            case .head:
                if self.state == .idle { self.start(context) }  // e.g. a pipelined head read with the previous `.end`
                self.sawHead = true
                self.unanswered += 1
            case .body:
                break
            case .end:
                self.cancelTimer()
                self.state = .idle
                self.sawHead = false
            }
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if self.state == .timedOut {
            promise?.fail(ChannelError.ioOnClosedChannel)  // the 408 went out instead
            return
        }
        switch Self.unwrapOutboundIn(data) {
        case .head(let head): if head.status.kind != .informational { self.responding = true }
        case .body: break
        case .end:
            self.responding = false
            self.unanswered = max(0, self.unanswered - 1)
        }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        self.state = .receiving
        self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: self.timeout) { self.expired() }
    }

    private func cancelTimer() {
        self.timer?.cancel()
        self.timer = nil
    }

    private func expired() {
        self.timer = nil
        guard self.state == .receiving, let context else { return }
        self.state = .timedOut
        // 408 only when this request's head was parsed and every earlier response is complete and this one
        // has not begun; a half-sent head (slow-loris), an early reply, or a pipelined backlog just closes.
        if self.sawHead, self.unanswered == 1, !self.responding {
            let body = ByteBuffer(bytes: RequestTimeoutError.body)
            let head = HTTPResponse(
                status: .requestTimeout,
                headerFields: [.connection: "close", .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes)]
            )
            context.write(Self.wrapOutboundOut(.head(head)), promise: nil)
            context.write(Self.wrapOutboundOut(.body(body)), promise: nil)
            context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.fireErrorCaught(RequestTimeoutError())
        context.close(promise: nil)
    }
}

/// Tells the deadline handler when a request's first byte arrives; raw bytes, so first in the pipeline.
final class RequestStartWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadline: RequestDeadlineHandler

    init(deadline: RequestDeadlineHandler) { self.deadline = deadline }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.deadline.bytesArrived(Self.unwrapInboundIn(data))
        context.fireChannelRead(data)
    }
}
