import AsyncHTTPClient
package import AuthKernel
import HTTPTypes
import NIOCore
import NIOHTTP1

/// ``OutboundHTTP`` on AsyncHTTPClient: the shared client's event loops and pool, but a `Location`
/// is never followed (the shared client follows up to twenty, to any address).
package struct AsyncHTTPClientOutbound: OutboundHTTP {
    /// One for the process, as AsyncHTTPClient's shared client is, so never shut down.
    package static let shared = AsyncHTTPClientOutbound()

    private let client: HTTPClient

    private init() {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    package func send(_ request: OutboundRequest) async throws -> OutboundResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        let response = try await client.execute(outgoing, timeout: .nanoseconds(Int64(request.timeout.components.seconds) * 1_000_000_000 + request.timeout.components.attoseconds / 1_000_000_000))
        let body = try await response.body.collect(upTo: request.maxResponseBytes)
        var headers = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        return OutboundResponse(status: HTTPResponse.Status(code: Int(response.status.code)), headers: headers, body: Array(body.readableBytesView))
    }
}
