package import AuthKernel
import AuthStorage
import Foundation
package import Hummingbird

/// The kernel's endpoints (contract §3): health, JWKS, providers, refresh, logout, me, account, sessions.
package struct KernelRoutes: Sendable {
    let kernel: Kernel
    let keyRing: SigningKeyRing
    let providerIDs: [String]
    /// The document `GET /openapi.yaml` serves (the kernel's part and the running providers').
    let openAPI: String
    /// The OpenID Provider's RSA key, published beside the Ed25519 keys.
    let rsa: (any RSASigning)?

    /// Creates the routes.
    package init(kernel: Kernel, keyRing: SigningKeyRing, providerIDs: [String], openAPI: String, rsa: (any RSASigning)? = nil) {
        self.rsa = rsa
        self.kernel = kernel
        self.keyRing = keyRing
        self.providerIDs = providerIDs
        self.openAPI = openAPI
    }

    struct Health: ResponseEncodable { var status = "ok" }
    struct Providers: ResponseEncodable { var providers: [String] }
    struct JWKS: ResponseEncodable { var keys: [[String: String]] }
    struct RefreshBody: FlatJSONDecodable {
        var refreshToken: String
        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
        init?(flat: FlatJSONObject) {
            guard let token = flat["refresh_token"] else { return nil }
            refreshToken = token
        }
    }
    /// `PATCH /me`: `display_name` (null clears it), `user_metadata` (replaced whole; null clears
    /// it) and/or `locale` (a BCP 47 tag; null clears it).
    struct ProfileBody: Decodable {
        var displayName: String??
        var userMetadata: JSONValue?
        var locale: String??
        enum CodingKeys: String, CodingKey { case displayName = "display_name", userMetadata = "user_metadata", appMetadata = "app_metadata", locale }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.appMetadata) {
                throw AuthError.invalidRequest("`app_metadata` is set by the app's backend (the admin API), not by the user.", field: "app_metadata")
            }
            if c.contains(.displayName) { displayName = .some(try c.decodeIfPresent(String.self, forKey: .displayName)) }
            if c.contains(.userMetadata) { userMetadata = try c.decode(JSONValue.self, forKey: .userMetadata) }
            if c.contains(.locale) {
                let tag = try? c.decodeIfPresent(String.self, forKey: .locale)
                guard let tag else {
                    guard try c.decodeNil(forKey: .locale) else {
                        throw AuthError.invalidRequest("`locale` is a BCP 47 language tag such as \"de\" or \"pt-BR\", or null.", field: "locale")
                    }
                    locale = .some(nil)
                    return
                }
                guard let valid = LanguageTag(tag) else {
                    throw AuthError.invalidRequest("`locale` is a BCP 47 language tag such as \"de\" or \"pt-BR\", or null.", field: "locale")
                }
                locale = .some(valid.description)
            }
            // A body that changes nothing is a mistake (a misspelt key), not a no-op.
            guard displayName != nil || userMetadata != nil || locale != nil else {
                throw AuthError.invalidRequest("Send `display_name`, `user_metadata`, `locale` or more than one.", field: "display_name")
            }
        }
    }
    struct SessionList: ResponseEncodable {
        struct Item: Encodable {
            var id: String
            var deviceName: String?
            var platform: String?
            var createdAt: String
            var lastUsedAt: String
            var current: Bool
            /// `session` (a sign-in) or `api_key` (contract §6).
            var kind: String
            enum CodingKeys: String, CodingKey { case id, deviceName = "device_name", platform, createdAt = "created_at", lastUsedAt = "last_used_at", current, kind }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encode(deviceName, forKey: .deviceName)
                try c.encode(platform, forKey: .platform)
                try c.encode(createdAt, forKey: .createdAt)
                try c.encode(lastUsedAt, forKey: .lastUsedAt)
                try c.encode(current, forKey: .current)
                try c.encode(kind, forKey: .kind)
            }
        }
        var sessions: [Item]
    }

    /// Adds the routes: the public ones at the root, the `/api/v1/auth` ones to `api`.
    package func add(to router: Router<AuthRequestContext>, api: RouterGroup<AuthRequestContext>) {
        let kernel = self.kernel
        let keyRing = self.keyRing
        let providerIDs = self.providerIDs
        let openAPI = ByteBuffer(string: self.openAPI)

        router.get("health") { _, _ in Health() }
        router.get("openapi.yaml") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: openAPI))
        }
        let rsa = self.rsa
        router.get(".well-known/jwks.json") { _, _ -> Response in
            // Each Ed25519 key twice (contract §13): `alg` EdDSA under its kid, and RFC 9864's fully
            // specified `Ed25519` under `KID-ed25519`; then the RSA key of ID tokens.
            let ed = keyRing.jwks(now: kernel.clock.now())["keys"] ?? []
            var keys = ed
            for key in ed {
                var fully = key
                fully["alg"] = "Ed25519"
                fully["kid"] = (key["kid"] ?? "") + OpenIDTokens.ed25519Suffix
                keys.append(fully)
            }
            if let rsa { keys += rsa.jwks }
            let data = try JSONEncoder().encode(JWKS(keys: keys))
            return Response(
                status: .ok,
                headers: [.contentType: "application/json", .cacheControl: "public, max-age=300", .accessControlAllowOrigin: "*"],
                body: .init(byteBuffer: ByteBuffer(bytes: data))
            )
        }

        api.get("providers") { _, _ in Providers(providers: providerIDs) }

        api.post("refresh") { request, context -> SessionResponse in
            let body = try await request.decodeJSON(as: RefreshBody.self, context: context)
            return try await kernel.sessions.refresh(body.refreshToken)
        }

        api.post("logout") { request, context -> Response in
            if let principal = context.principal {
                // The Bearer says which session ends, whatever the body holds (contract §12): clients
                // that always send a JSON body, `{}` included, can still log out.
                try await kernel.sessions.revoke(principal.session.id, of: principal.user.id)
                await kernel.audit.record("logout", user: principal.user.id)
                return Response(status: .noContent)
            }
            // Contract §5: without a Bearer (an expired access token), by the refresh token; an
            // unknown one is 204 too, so the answer tells nobody whether a token was live.
            guard request.headers[.authorization] == nil, let body = try await request.decodeJSONIfPresent(as: RefreshBody.self, context: context) else {
                throw AuthError.unauthorized
            }
            if let userID = try await kernel.sessions.logout(refreshToken: body.refreshToken) {
                await kernel.audit.record("logout", user: userID)
            }
            return Response(status: .noContent)
        }

        api.get("me") { _, context -> UserResponse in
            UserResponse(try context.requirePrincipal().user)
        }

        api.patch("me") { request, context -> UserResponse in
            let principal = try context.requirePrincipal()
            let body = try await request.decodeJSON(as: ProfileBody.self, context: context)
            let name = try body.displayName.map { try DisplayName.validate($0) }
            let metadata = try body.userMetadata.map {
                try UserMetadata.validate($0, field: "user_metadata", maxBytes: UserMetadata.maxUserBytes)
            }
            let user = try await kernel.users.update(principal.user.id) { user in
                if let name { user.displayName = name }
                if let metadata { user.userMetadata = metadata }
                if let locale = body.locale { user.locale = locale }
            }
            await kernel.events.emit("user.updated", AccountEvents.data(user))
            return UserResponse(user)
        }

        api.delete("account") { _, context -> Response in
            let principal = try context.requirePrincipal()
            // Deleting is the last credential change (contract §12); an anonymous user with nothing
            // linked, whose token is its only credential, is let through.
            try kernel.sessions.requireFresh(principal)
            await kernel.accountDeletion.run(for: principal.user)
            try await kernel.users.delete(principal.user.id)
            await kernel.audit.record("account_deleted", user: principal.user.id)
            return Response(status: .noContent)
        }

        api.get("sessions") { _, context -> SessionList in
            let principal = try context.requirePrincipal()
            let sessions = try await kernel.sessions.sessions(of: principal.user.id)
            return SessionList(
                sessions: sessions.map {
                    .init(
                        id: $0.id.lowercased, deviceName: $0.deviceName, platform: $0.platform,
                        createdAt: Timestamp.string($0.createdAt), lastUsedAt: Timestamp.string($0.lastUsedAt),
                        current: $0.id == principal.session.id, kind: $0.kind?.rawValue ?? "session"
                    )
                }
            )
        }

        api.delete("sessions/{id}") { _, context -> Response in
            let principal = try context.requirePrincipal()
            guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
                throw AuthError.notFound("No such session.")
            }
            // Ending an API key is a credential change like deleting it (contract §12).
            if try await kernel.sessions.sessions(of: principal.user.id).contains(where: { $0.id == id && $0.isAPIKey }) {
                try kernel.sessions.requireFresh(principal)
            }
            try await kernel.sessions.revoke(id, of: principal.user.id)
            return Response(status: .noContent)
        }
    }
}
