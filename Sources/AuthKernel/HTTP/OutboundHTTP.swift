public import HTTPTypes

/// Outbound HTTP, as the SDK sees it: one request, one whole response, no redirects followed.
///
/// The SDK names the shape and the server brings the client (AsyncHTTPClient), so a provider
/// package and its tests never build one. Providers reach it as ``Kernel/http``:
///
/// ```swift
/// let response = try await kernel.http.send(OutboundRequest(url: "https://idp.example.com/jwks"))
/// guard response.status == .ok else { throw AuthError.unavailable }
/// let keys = try JSONDecoder().decode(KeySet.self, from: Data(response.body))
/// ```
public protocol OutboundHTTP: Sendable {
    /// Sends `request` and reads the whole response (up to `request.maxResponseBytes`).
    /// A redirect is answered as it came (3xx), never followed: a key set or a webhook must come
    /// from the address configured, not from wherever that address points.
    /// - Throws: when the host cannot be reached, the time runs out or the response is too long.
    func send(_ request: OutboundRequest) async throws -> OutboundResponse
}

/// A request for ``OutboundHTTP``.
public struct OutboundRequest: Sendable {
    /// The method (GET by default).
    public var method: HTTPRequest.Method
    /// The absolute URL, `https://` (or `http://` for a service on this machine).
    public var url: String
    /// Header fields.
    public var headers: HTTPFields
    /// The body; empty for none.
    public var body: [UInt8]
    /// How long the whole exchange may take.
    public var timeout: Duration
    /// The longest response body read; a longer one fails the request.
    public var maxResponseBytes: Int

    /// A request; GET, 10 seconds and 1 MiB by default.
    public init(
        method: HTTPRequest.Method = .get, url: String, headers: HTTPFields = [:], body: [UInt8] = [], timeout: Duration = .seconds(10),
        maxResponseBytes: Int = 1 << 20
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }
}

/// What came back.
public struct OutboundResponse: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// Header fields.
    public var headers: HTTPFields
    /// The whole body.
    public var body: [UInt8]

    /// A response (what a stand-in answers in tests).
    public init(status: HTTPResponse.Status, headers: HTTPFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// No outbound HTTP: every request fails. What a kernel has when nothing gave it a client.
public struct NoOutboundHTTP: OutboundHTTP {
    /// Creates it.
    public init() {}

    /// Always throws.
    public func send(_ request: OutboundRequest) async throws -> OutboundResponse {
        throw OutboundHTTPUnavailable()
    }
}

/// Thrown by ``NoOutboundHTTP``.
public struct OutboundHTTPUnavailable: Error, CustomStringConvertible {
    /// Creates it.
    public init() {}
    /// Why.
    public var description: String { "this server has no outbound HTTP client" }
}
