import AuthKernel
import Foundation
import HTTPTypes
import Hummingbird

/// CORS for the endpoints a browser app calls itself (contract §13): token, userinfo and revoke
/// answer the origins of public clients' redirect URIs, without credentials, so a single-page app
/// registered `--public` can finish its sign-in; any other origin gets no CORS header and the
/// browser keeps the answer from it. Preflights are answered here.
struct ClientCORSMiddleware: RouterMiddleware {
    typealias Context = AuthRequestContext
    let clients: OpenIDClients
    static let paths: Set<String> = ["/oauth/token", "/oauth/userinfo", "/oauth/revoke"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.paths.contains(request.uri.path), let origin = request.headers[.origin] else { return try await next(request, context) }
        let allowed = try await isAllowed(origin)
        if request.method == .options {
            var response = Response(status: .noContent, headers: [.vary: "Origin"])
            if allowed {
                response.headers[.accessControlAllowOrigin] = origin
                response.headers[.accessControlAllowMethods] = request.uri.path == "/oauth/userinfo" ? "GET, POST" : "POST"
                response.headers[.accessControlAllowHeaders] = "Authorization, Content-Type"
                response.headers[.accessControlMaxAge] = "600"
            }
            return response
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.vary] = "Origin"
        if allowed {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlExposeHeaders] = "WWW-Authenticate"
        }
        return response
    }

    /// Whether `origin` is the origin of a public client's https or loopback redirect URI.
    func isAllowed(_ origin: String) async throws -> Bool {
        guard origin.utf8.count <= 512, origin != "null" else { return false }
        return try await clients.list().contains { client in
            client.isPublic && client.redirectURIs.contains { Self.origin(of: $0) == origin }
        }
    }

    /// `scheme://host[:port]` of an http(s) URI; nil for a custom scheme, which has no web origin.
    static func origin(of uri: String) -> String? {
        guard let c = URLComponents(string: uri), let scheme = c.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = c.host else {
            return nil
        }
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return scheme + "://" + shownHost + (c.port.map { ":\($0)" } ?? "")
    }
}
