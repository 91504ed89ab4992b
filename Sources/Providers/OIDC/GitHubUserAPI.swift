import AuthKernel
import Foundation
import HTTPTypes

/// GitHub's user API (contract §16): the account's numeric `id` is the identity, and its email the
/// one `/user/emails` marks `primary` and `verified` (scope `user:email`), at `api_url`.
struct GitHubUserAPI {
    var apiURL: String
    var http: any OutboundHTTP

    private struct User: Decodable {
        var id: Int64
        var login: String?
        var name: String?
    }

    private struct Email: Decodable {
        var email: String
        var primary: Bool?
        var verified: Bool?
    }

    /// The signed-in GitHub account behind `accessToken`.
    /// - Throws: ``OIDCTokenRequest/Refused`` when GitHub refuses the token or answers what it should not.
    func identity(accessToken: String, upstream: String, expiresAt: Date) async throws -> OIDCTokenVerifier.Identity {
        let user = try JSONDecoder().decode(User.self, from: Data(try await get("/user", accessToken, upstream: upstream)))
        guard user.id > 0 else { throw OIDCTokenRequest.Refused(description: "GitHub's user has no id") }
        let emails = (try? JSONDecoder().decode([Email].self, from: Data(try await get("/user/emails", accessToken, upstream: upstream)))) ?? []
        let primary = emails.first { $0.primary == true && $0.verified == true }
        return OIDCTokenVerifier.Identity(
            subject: String(user.id), email: primary?.email, emailVerified: primary != nil, name: user.name ?? user.login, expiresAt: expiresAt)
    }

    private func get(_ path: String, _ token: String, upstream: String) async throws -> [UInt8] {
        let headers: HTTPFields = [
            .accept: "application/vnd.github+json", .authorization: "Bearer " + token, .userAgent: "authd",
            HTTPField.Name("X-GitHub-Api-Version")!: "2022-11-28",
        ]
        let response: OutboundResponse
        do {
            response = try await http.send(OutboundRequest(url: apiURL + path, headers: headers, maxResponseBytes: 256 * 1024))
        } catch {
            throw OIDCDiscovery.unavailable(upstream)
        }
        guard response.status == .ok else { throw OIDCTokenRequest.Refused(description: "GitHub's \(path) answered HTTP \(response.status.code)") }
        return response.body
    }
}
