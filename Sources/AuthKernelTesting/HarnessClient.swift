import AuthKernel
import Foundation
public import HTTPTypes
import Hummingbird
public import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOPosix
import Synchronization

/// A client of the server a ``TestHarness`` runs: straight to its router (no sockets, the client's
/// address "unknown"), or over a socket to the server listening on 127.0.0.1.
///
/// The kit's own, so a provider's tests build no HTTP client library: a few lines of SwiftNIO,
/// which Hummingbird brings anyway.
public struct HarnessClient: Sendable {
    enum Target: Sendable {
        case router(@Sendable (Request) async throws -> Response)
        case socket(port: Int)
    }

    let target: Target

    /// The port the server listens on (nil for a router client).
    public var port: Int? {
        if case .socket(let port) = target { return port }
        return nil
    }

    /// Sends a request and reads the whole response.
    @discardableResult
    public func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> HarnessResponse {
        var headers = headers
        if let body { headers[.contentLength] = String(body.readableBytes) }
        switch target {
        case .router(let respond):
            let request = Request(
                head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: uri, headerFields: headers),
                body: RequestBody(buffer: body ?? ByteBuffer()))
            let response = try await respond(request)
            let collected = CollectingWriter.Box()
            try await response.body.write(CollectingWriter(box: collected))
            return HarnessResponse(head: response.head, body: collected.buffer.withLock { $0 })
        case .socket(let port):
            return try await Self.overSocket(port: port, uri: uri, method: method, headers: headers, body: body)
        }
    }

    /// One request on a new HTTP/1.1 connection.
    static func overSocket(port: Int, uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> HarnessResponse {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
            }
        }
        return try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method.rawValue), uri: uri)
            head.headers.add(name: "Host", value: "localhost:\(port)")
            head.headers.add(name: "Connection", value: "close")
            for field in headers { head.headers.add(name: field.name.rawName, value: field.value) }
            try await outbound.write(.head(head))
            if let body { try await outbound.write(.body(.byteBuffer(body))) }
            try await outbound.write(.end(nil))
            var response: HTTPResponse?
            var collected = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let h):
                    var fields = HTTPFields()
                    for (name, value) in h.headers { if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) } }
                    response = HTTPResponse(status: .init(code: Int(h.status.code), reasonPhrase: h.status.reasonPhrase), headerFields: fields)
                case .body(var buffer):
                    collected.writeBuffer(&buffer)
                case .end:
                    guard let response else { throw HarnessClientError("the server ended the response before its head") }
                    return HarnessResponse(head: response, body: collected)
                }
            }
            throw HarnessClientError("the server closed the connection mid-response")
        }
    }
}

/// What a ``HarnessClient`` got back.
public struct HarnessResponse: Sendable {
    /// Status and header fields.
    public let head: HTTPResponse
    /// The whole body.
    public let body: ByteBuffer

    /// The status.
    public var status: HTTPResponse.Status { head.status }
    /// The header fields.
    public var headers: HTTPFields { head.headerFields }
}

struct HarnessClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects a response body written by a route.
private struct CollectingWriter: ResponseBodyWriter {
    final class Box: Sendable {
        let buffer = Mutex(ByteBuffer())
    }
    let box: Box

    func write(_ buffer: ByteBuffer) async throws {
        box.buffer.withLock { collected in
            var copy = buffer
            collected.writeBuffer(&copy)
        }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
