import AuthKernel
import AuthStorage
import Foundation
import Hummingbird

/// `/api/v1/admin/clients` (contract §13): the OpenID clients over the admin API, with a service
/// key, as `authd clients …` does on the command line. Every change is audited with the key's name.
/// The body's fields are the registration's JSON names; an unknown one is refused, since a
/// misspelt setting would otherwise change nothing without a word.
struct ClientAdminRoutes: Sendable {
    let kernel: Kernel
    let serviceKeys: ServiceKeys
    let clients: OpenIDClients

    func add(to router: Router<AuthRequestContext>) {
        let admin = router.group("api/v1/admin/clients")
        let routes = self

        admin.get { request, _ -> Response in
            _ = try await AdminAPIRoutes.caller(request, routes.serviceKeys)
            let now = routes.kernel.clock.now()
            return try Self.json(["clients": try await routes.clients.list().map { AdminClientView($0, now: now) }])
        }
        admin.post { request, context -> Response in
            let key = try await AdminAPIRoutes.caller(request, routes.serviceKeys)
            let created = try await routes.clients.create(try await Self.settings(request, context))
            await routes.kernel.audit.record("admin_api", account: key, reason: "create client \(created.client.id)")
            var answer = try Self.object(AdminClientView(created.client, now: routes.kernel.clock.now()))
            if let secret = created.secret { answer["client_secret"] = .string(secret) }
            var response = try Self.json(answer)
            response.status = .created
            return response
        }
        admin.get("{client_id}") { request, context -> Response in
            _ = try await AdminAPIRoutes.caller(request, routes.serviceKeys)
            guard let client = try await routes.clients.find(context.parameters.get("client_id") ?? "") else { throw Self.notFound }
            return try Self.json(AdminClientView(client, now: routes.kernel.clock.now()))
        }
        admin.patch("{client_id}") { request, context -> Response in
            let key = try await AdminAPIRoutes.caller(request, routes.serviceKeys)
            let id = context.parameters.get("client_id") ?? ""
            guard let client = try await routes.clients.update(id, try await Self.settings(request, context)) else { throw Self.notFound }
            await routes.kernel.audit.record("admin_api", account: key, reason: "update client \(id)")
            return try Self.json(AdminClientView(client, now: routes.kernel.clock.now()))
        }
        admin.post("{client_id}/rotate-secret") { request, context -> Response in
            let key = try await AdminAPIRoutes.caller(request, routes.serviceKeys)
            let id = context.parameters.get("client_id") ?? ""
            let grace = try await request.decodeJSONIfPresent(as: RotateBody.self, context: context)?.grace ?? 0
            guard let (_, secret) = try await routes.clients.rotateSecret(id, grace: grace) else { throw Self.notFound }
            await routes.kernel.audit.record("admin_api", account: key, reason: "rotate client secret \(id)")
            var response = try Self.json(["client_id": id, "client_secret": secret])
            response.headers[.cacheControl] = "no-store"
            return response
        }
        admin.delete("{client_id}") { request, context -> Response in
            let key = try await AdminAPIRoutes.caller(request, routes.serviceKeys)
            let id = context.parameters.get("client_id") ?? ""
            guard try await routes.clients.delete(id) else { throw Self.notFound }
            await routes.kernel.audit.record("admin_api", account: key, reason: "delete client \(id)")
            return Response(status: .noContent)
        }
    }

    struct RotateBody: Decodable { var grace: Int? }

    static let notFound = AuthError.notFound("No client has that id.")

    /// The body as settings, refusing a field registration does not know.
    static func settings(_ request: Request, _ context: AuthRequestContext) async throws -> OpenIDClientSettings {
        let body = try await request.decodeJSON(as: [String: JSONValue].self, context: context)
        let known = Set(OpenIDClientSettings.CodingKeys.allCases.map(\.rawValue))
        if let unknown = body.keys.sorted().first(where: { !known.contains($0) }) {
            throw AuthError.invalidRequest("`\(LogSafe.text(unknown, maxLength: 40))` is not a client setting.", field: unknown)
        }
        do {
            return try JSONDecoder().decode(OpenIDClientSettings.self, from: JSONEncoder().encode(body))
        } catch DecodingError.typeMismatch(_, let ctx) {
            let field = ctx.codingPath.first?.stringValue ?? ""
            throw AuthError.invalidRequest("The field `\(field)` has the wrong type.", field: field)
        } catch DecodingError.valueNotFound(_, let ctx) {
            let field = ctx.codingPath.first?.stringValue ?? ""
            throw AuthError.invalidRequest("The field `\(field)` has the wrong type.", field: field)
        }
    }

    static func object<T: Encodable>(_ value: T) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(value))
    }

    static func json<T: Encodable>(_ value: T) throws -> Response {
        var w = JSONWriter(capacity: 512)
        w.value(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value)))
        return w.response()
    }
}
