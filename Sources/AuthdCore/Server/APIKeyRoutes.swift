import AuthKernel
import AuthStorage
import Foundation
import Hummingbird

/// API keys (contract §6): create (fresh, full session), list, revoke, and exchange for an access token.
struct APIKeyRoutes: Sendable {
    let kernel: Kernel

    struct CreateBody: Decodable {
        var name: String
        var expiresIn: Int?
        enum CodingKeys: String, CodingKey { case name, expiresIn = "expires_in" }
    }
    struct ExchangeBody: Decodable {
        var apiKey: String
        enum CodingKeys: String, CodingKey { case apiKey = "api_key" }
    }

    /// `expires_in` may be a minute to ten years; none means the key lives until revoked.
    static let lifetimes = 60...(10 * 365 * 86_400)

    func add(to api: RouterGroup<AuthRequestContext>) {
        let kernel = self.kernel

        api.post("api-keys") { request, context -> Response in
            let principal = try context.requirePrincipal()
            let body = try await request.decodeJSON(as: CreateBody.self, context: context)
            guard let name = try ShortLabel.clean(body.name, field: "name", maxLength: DeviceInfo.maxLength) else {
                throw AuthError.invalidRequest("The field `name` must name the key (e.g. the device that keeps it).", field: "name")
            }
            if let expiresIn = body.expiresIn, !Self.lifetimes.contains(expiresIn) {
                throw AuthError.invalidRequest("The field `expires_in` must be 60 to \(Self.lifetimes.upperBound) seconds.", field: "expires_in")
            }
            try kernel.sessions.requireFresh(principal)
            let created = try await kernel.sessions.createAPIKey(for: principal, name: name, expiresIn: body.expiresIn)
            await kernel.users.noticeMethodAdded(principal.user, method: SignInMethodNotices.catalogMethod("mail.method.api_key", "name", name), credential: .session(created.session.id))
            var w = JSONWriter(capacity: 320)
            w.beginObject()
            w.key("id"); w.string(created.session.id.lowercased)
            w.key("name"); w.string(name)
            w.key("api_key"); w.string(created.secret)
            w.key("prefix"); w.string(created.session.keyPrefix ?? "")
            w.key("created_at"); w.string(Timestamp.string(created.session.createdAt))
            w.key("expires_at"); Self.writeExpiry(created.session, to: &w)
            w.endObject()
            var response = w.response(status: .created)
            response.headers[.cacheControl] = "no-store"
            return response
        }

        api.get("api-keys") { _, context -> Response in
            let principal = try context.requirePrincipal()
            let keys = try await kernel.sessions.apiKeys(of: principal.user.id)
            var w = JSONWriter(capacity: 64 + 200 * keys.count)
            w.beginObject()
            w.key("api_keys")
            w.beginArray()
            for key in keys {
                w.beginObject()
                w.key("id"); w.string(key.id.lowercased)
                w.key("name"); w.string(key.deviceName ?? "")
                w.key("prefix"); w.string(key.keyPrefix ?? "")
                w.key("created_at"); w.string(Timestamp.string(key.createdAt))
                w.key("last_used_at")
                // A key not yet exchanged has not been used: its last_used_at is still its creation.
                if key.lastUsedAt > key.createdAt { w.string(Timestamp.string(key.lastUsedAt)) } else { w.string(nil) }
                w.key("expires_at"); Self.writeExpiry(key, to: &w)
                w.endObject()
            }
            w.endArray()
            w.endObject()
            return w.response()
        }

        api.delete("api-keys/{id}") { _, context -> Response in
            let principal = try context.requirePrincipal()
            guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw AuthError.notFound("No such API key.") }
            try kernel.sessions.requireFresh(principal)
            try await kernel.sessions.revokeAPIKey(id, of: principal.user.id)
            return Response(status: .noContent)
        }

        api.post("api-keys/exchange") { request, context -> Response in
            // Per client network before anything is looked up: guessing keys costs the guesser.
            try await kernel.rateLimiter.consume(
                kernel.sessions.apiKeySettings.exchangesPerIP, key: "api_key.ip:\(context.clientKey)",
                message: "Too many API-key exchanges from this network. Wait before trying again.")
            let body = try await request.decodeJSON(as: ExchangeBody.self, context: context)
            let (token, expiresIn) = try await kernel.sessions.exchangeAPIKey(body.apiKey)
            var w = JSONWriter(capacity: 512)
            w.beginObject()
            w.key("access_token"); w.string(token)
            w.key("token_type"); w.string("Bearer")
            w.key("expires_in"); w.int(expiresIn)
            w.endObject()
            var response = w.response()
            response.headers[.cacheControl] = "no-store"
            return response
        }
    }

    static func writeExpiry(_ key: SessionRecord, to w: inout JSONWriter) {
        if key.expiresAt >= SessionRecord.neverExpires { w.string(nil) } else { w.string(Timestamp.string(key.expiresAt)) }
    }
}
