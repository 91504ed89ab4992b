import AsyncHTTPClient
import AuthKernel
import Foundation
import NIOCore
import NIOHTTP1

/// Talks to Apple's token and revoke endpoints with a fresh client secret each time.
struct AppleTokenClient: Sendable {
    let settings: AppleSettings.Revocation
    let secret: AppleClientSecret
    let clock: any AuthClock

    struct TokenResponse: Decodable {
        var refreshToken: String?
        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
    }

    /// Exchanges an authorization code; returns Apple's refresh token (nil when Apple gave none).
    func exchange(code: String) async throws -> String? {
        let body = try await post(settings.tokenURL, [
            "client_id": settings.clientID, "client_secret": try await secret.make(now: clock.now()),
            "code": code, "grant_type": "authorization_code",
        ])
        let token = try JSONDecoder().decode(TokenResponse.self, from: Data(body.readableBytesView)).refreshToken
        // Apple's are a few hundred bytes; a larger one is not kept in the store.
        guard let token, token.utf8.count <= 4096 else { return nil }
        return token
    }

    /// Revokes a refresh token.
    func revoke(refreshToken: String) async throws {
        _ = try await post(settings.revokeURL, [
            "client_id": settings.clientID, "client_secret": try await secret.make(now: clock.now()),
            "token": refreshToken, "token_type_hint": "refresh_token",
        ])
    }

    private func post(_ url: String, _ form: [String: String]) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: Self.formEncode(form)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw AppleEndpointError(url: url, status: response.status.code, body: String(buffer: body)) }
        return body
    }

    static func formEncode(_ form: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return form.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
    }
}

/// Apple answered with something other than 200 (its body says why, e.g. `invalid_grant`).
struct AppleEndpointError: Error, CustomStringConvertible {
    let url: String
    let status: UInt
    let body: String
    var description: String { "\(url) answered \(status): \(LogSafe.text(body, maxLength: 200))" }
}
