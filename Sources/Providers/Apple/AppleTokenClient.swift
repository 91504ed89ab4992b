import AuthKernel
import Foundation
import HTTPTypes

/// Talks to Apple's token and revoke endpoints with a fresh client secret each time.
struct AppleTokenClient: Sendable {
    let settings: AppleSettings.Revocation
    let secret: AppleClientSecret
    let clock: any AuthClock
    let http: any OutboundHTTP

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
        let token = try JSONDecoder().decode(TokenResponse.self, from: Data(body)).refreshToken
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

    private func post(_ url: String, _ form: [String: String]) async throws -> [UInt8] {
        let response = try await http.send(
            OutboundRequest(method: .post, url: url, headers: [.contentType: "application/x-www-form-urlencoded"], body: Array(Self.formEncode(form).utf8)))
        guard response.status == .ok else { throw AppleEndpointError(url: url, status: response.status.code, body: String(decoding: response.body, as: UTF8.self)) }
        return response.body
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
    let status: Int
    let body: String
    var description: String { "\(url) answered \(status): \(LogSafe.text(body, maxLength: 200))" }
}
