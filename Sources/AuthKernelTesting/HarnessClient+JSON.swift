import Foundation
public import HTTPTypes
import NIOCore

extension HarnessClient {
    /// Sends a request with an optional JSON body (a dictionary, or raw text), Bearer token and
    /// further header fields (e.g. `X-Forwarded-For` through a trusted proxy, over sockets).
    ///
    /// ```swift
    /// let first = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8", "display_name": "Ada", "device_name": "Ada's phone"])
    /// #expect(first.status == .ok)
    /// ```
    @discardableResult
    public func send(
        _ method: HTTPRequest.Method, _ uri: String, json: [String: Any]? = nil, raw: String? = nil, bearer: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> HarnessResponse {
        var headers = extra
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
            headers[.contentType] = "application/json"
        } else if let raw {
            body = ByteBuffer(string: raw)
            headers[.contentType] = "application/json"
        }
        return try await execute(uri: uri, method: method, headers: headers, body: body)
    }
}

extension HarnessResponse {
    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
    }

    /// `error.code` of a contract error body.
    public var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }

    /// `error.details.retry_after` of a 429.
    public var retryAfter: Int? { ((json["error"] as? [String: Any])?["details"] as? [String: Any])?["retry_after"] as? Int }

    /// `access_token` of a session response.
    public var accessToken: String? { json["access_token"] as? String }

    /// The body decoded as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
    }
}
