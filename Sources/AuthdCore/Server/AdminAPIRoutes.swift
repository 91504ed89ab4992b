import AuthKernel
import AuthStorage
import Foundation
import Hummingbird

/// The admin API (contract §8): the app's backend, holding a service key, finds users, sets their
/// `app_metadata`, name and disabled state, deletes them and ends their sessions. Every call is
/// audited with the key's name.
struct AdminAPIRoutes: Sendable {
    let kernel: Kernel
    let serviceKeys: ServiceKeys

    /// The most users one page holds, and the most a query may be.
    static let maxLimit = 200, defaultLimit = 50, maxQueryLength = 256

    struct PatchBody: Decodable {
        var appMetadata: JSONValue?
        var displayName: String??
        var disabled: Bool?
        var groups: [String]?
        enum CodingKeys: String, CodingKey { case appMetadata = "app_metadata", displayName = "display_name", disabled, groups }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.appMetadata) { appMetadata = try c.decode(JSONValue.self, forKey: .appMetadata) }
            if c.contains(.displayName) { displayName = .some(try c.decodeIfPresent(String.self, forKey: .displayName)) }
            disabled = try c.decodeIfPresent(Bool.self, forKey: .disabled)
            groups = try c.decodeIfPresent([String].self, forKey: .groups)
            guard appMetadata != nil || displayName != nil || disabled != nil || groups != nil else {
                throw AuthError.invalidRequest("Send `app_metadata`, `display_name`, `disabled` or `groups`.")
            }
        }
    }

    struct InviteBody: Decodable {
        var email: String
        var groups: [String]?
        var displayName: String?
        enum CodingKeys: String, CodingKey { case email, groups, displayName = "display_name" }
    }

    func add(to router: Router<AuthRequestContext>) {
        let admin = router.group("api/v1/admin")
        let kernel = self.kernel, serviceKeys = self.serviceKeys, administration = UserAdministration(kernel: kernel)

        @Sendable func caller(_ request: Request) async throws -> String { try await Self.caller(request, serviceKeys) }

        @Sendable func user(_ context: AuthRequestContext) async throws -> UserRecord {
            guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)), let user = try await kernel.users.user(id: id) else {
                throw AuthError.notFound("No such user.")
            }
            return user
        }

        admin.get("users") { request, context -> Response in
            let key = try await caller(request)
            let parameters = request.uri.queryParameters
            let query = parameters.get("query").map { $0.lowercased() } ?? ""
            guard query.count <= Self.maxQueryLength else {
                throw AuthError.invalidRequest("The parameter `query` may be at most \(Self.maxQueryLength) characters.", field: "query")
            }
            var limit = Self.defaultLimit
            if let text = parameters.get("limit") {
                guard let n = Int(text), (1...Self.maxLimit).contains(n) else {
                    throw AuthError.invalidRequest("The parameter `limit` must be 1 to \(Self.maxLimit).", field: "limit")
                }
                limit = n
            }
            var after: UUID?
            if let cursor = parameters.get("cursor"), !cursor.isEmpty {
                guard let id = UUID(uuidString: cursor) else { throw AuthError.invalidRequest("The parameter `cursor` is not one this API gave.", field: "cursor") }
                after = id
            }
            // One more than asked: whether it exists says whether there is a next page.
            let page = try await kernel.users.page(matching: query, after: after, limit: limit + 1)
            let shown = page.prefix(limit)
            var w = JSONWriter(capacity: 128 + 400 * shown.count)
            w.beginObject()
            w.key("users")
            w.beginArray()
            for user in shown { Self.write(user, to: &w) }
            w.endArray()
            w.key("next_cursor"); w.string(page.count > limit ? shown.last?.id.lowercased : nil)
            w.endObject()
            await kernel.audit.record("admin_api", account: key, reason: "list users")
            return w.response()
        }

        admin.get("users/{id}") { request, context -> Response in
            let key = try await caller(request)
            let found = try await user(context)
            await kernel.audit.record("admin_api", user: found.id, account: key, reason: "read user")
            var w = JSONWriter(capacity: 512)
            Self.write(found, to: &w)
            return w.response()
        }

        admin.patch("users/{id}") { request, context -> Response in
            let key = try await caller(request)
            let found = try await user(context)
            let body = try await request.decodeJSON(as: PatchBody.self, context: context)
            let updated = try await administration.update(
                found, .init(appMetadata: body.appMetadata, displayName: body.displayName, disabled: body.disabled, groups: body.groups), by: .init(event: "admin_api", account: key))
            var w = JSONWriter(capacity: 512)
            Self.write(updated, to: &w)
            return w.response()
        }

        admin.delete("users/{id}") { request, context -> Response in
            let key = try await caller(request)
            try await administration.delete(try await user(context), by: .init(event: "admin_api", account: key))
            return Response(status: .noContent)
        }

        admin.get("users/{id}/sessions") { request, context -> Response in
            let key = try await caller(request)
            let found = try await user(context)
            let sessions = try await kernel.sessions.sessions(of: found.id)
            var w = JSONWriter(capacity: 64 + 300 * sessions.count)
            w.beginObject()
            w.key("sessions")
            w.beginArray()
            for s in sessions {
                w.beginObject()
                w.key("id"); w.string(s.id.lowercased)
                w.key("kind"); w.string(s.kind?.rawValue ?? "session")
                w.key("device_name"); w.string(s.deviceName)
                w.key("platform"); w.string(s.platform)
                w.key("amr"); w.strings(s.amr)
                w.key("key_prefix"); w.string(s.keyPrefix)
                w.key("created_at"); w.string(Timestamp.string(s.createdAt))
                w.key("last_used_at"); w.string(Timestamp.string(s.lastUsedAt))
                w.key("expires_at"); w.string(s.expiresAt >= SessionRecord.neverExpires ? nil : Timestamp.string(s.expiresAt))
                w.endObject()
            }
            w.endArray()
            w.endObject()
            await kernel.audit.record("admin_api", user: found.id, account: key, reason: "list sessions")
            return w.response()
        }

        // Invitations (contract §17): the link is in the answer once, and in the mail.
        admin.post("invitations") { request, context -> Response in
            let key = try await caller(request)
            let body = try await request.decodeJSON(as: InviteBody.self, context: context)
            let made = try await InvitationSender(kernel: kernel).invite(
                email: body.email, groups: body.groups ?? [], displayName: body.displayName, by: .init(event: "admin_api", account: key))
            var response = made.json.response(status: .created)
            response.headers[.cacheControl] = "no-store"
            return response
        }

        admin.get("invitations") { request, _ -> Response in
            let key = try await caller(request)
            let pending = try await kernel.invitations.list()
            var w = JSONWriter(capacity: 64 + 256 * pending.count)
            w.beginObject()
            w.key("invitations")
            w.beginArray()
            for invitation in pending { InvitationSender.write(invitation, to: &w) }
            w.endArray()
            w.endObject()
            await kernel.audit.record("admin_api", account: key, reason: "list invitations")
            return w.response()
        }

        admin.delete("invitations/{id}") { request, context -> Response in
            let key = try await caller(request)
            let id = context.parameters.get("id") ?? ""
            guard id.utf8.count <= 64, try await kernel.invitations.revoke(id: id) else { throw AuthError.notFound("No pending invitation has that id.") }
            await kernel.audit.record("admin_api", account: key, reason: "revoke invitation \(id)")
            return Response(status: .noContent)
        }

        admin.delete("users/{id}/sessions") { request, context -> Response in
            let key = try await caller(request)
            try await administration.endSessions(of: try await user(context), by: .init(event: "admin_api", account: key))
            return Response(status: .noContent)
        }
    }

    /// The calling key's name, or 401 `UNAUTHORIZED` (the contract's shape, with a Bearer challenge).
    static func caller(_ request: Request, _ serviceKeys: ServiceKeys) async throws -> String {
        guard let header = request.headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer ",
            let name = try await serviceKeys.verify(BearerAuthenticator.bearerToken(header) ?? "")
        else {
            throw AuthError(status: .unauthorized, code: "UNAUTHORIZED", message: "Send a service key (authd service-keys create) as the Bearer token.")
        }
        return name
    }

    /// The user object plus what only the admin sees: `disabled` and `disabled_at`.
    static func write(_ user: UserRecord, to w: inout JSONWriter) {
        UserResponse(user).write(to: &w, closing: false)
        w.key("disabled"); w.bool(user.disabledAt != nil)
        w.key("disabled_at"); w.string(user.disabledAt.map(Timestamp.string))
        w.endObject()
    }
}
