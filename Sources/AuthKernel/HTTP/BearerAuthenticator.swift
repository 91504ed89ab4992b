package import Hummingbird

/// Reads `Authorization: Bearer …` and puts the verified ``Principal`` in the context.
///
/// No header: the request goes on unauthenticated (routes that need a user call
/// ``AuthRequestContext/requirePrincipal()``). A header that is present but wrong, or whose session
/// has ended, is refused with 401 at once, so a sign-in that meant to link an identity never silently
/// creates another account instead.
///
/// A limited session (made by an API key or the device flow, contract §5) may only read and edit the
/// profile, list sessions, log out and refresh: on any other route its token gets 403 `FORBIDDEN`
/// here, before a provider's handler runs, so no provider can forget the rule.
package struct BearerAuthenticator: RouterMiddleware {
    package typealias Context = AuthRequestContext
    let sessions: SessionService

    /// Creates the middleware.
    package init(sessions: SessionService) { self.sessions = sessions }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else { return try await next(request, context) }
        guard let token = Self.bearerToken(header) else { throw AuthError.unauthorized }
        var context = context
        let principal = try await sessions.authenticate(bearer: token)
        if principal.session.isLimited, !Self.allowsLimited(request.method, request.uri.path) { throw AuthError.forbidden }
        context.principal = principal
        return try await next(request, context)
    }

    /// The routes a limited session may use (contract §5).
    static func allowsLimited(_ method: HTTPRequest.Method, _ path: String) -> Bool {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        switch (method, path) {
        case (.get, "/api/v1/auth/me"), (.patch, "/api/v1/auth/me"), (.get, "/api/v1/auth/sessions"),
            (.post, "/api/v1/auth/logout"), (.post, "/api/v1/auth/refresh"):
            return true
        default:
            return false
        }
    }

    /// The token of `Bearer <token>` (scheme case-insensitive, surrounding spaces ignored). Byte-level:
    /// Foundation's trimming went through NSString and cost more than the rest of the request (profiled).
    package static func bearerToken(_ header: String) -> String? {
        let bytes = Array(header.utf8)
        guard bytes.count > 7 else { return nil }
        let scheme: [UInt8] = Array("bearer ".utf8)
        for i in 0..<7 where bytes[i] | (i < 6 ? 0x20 : 0) != scheme[i] { return nil }
        var start = 7, end = bytes.count
        while start < end, bytes[start] == 0x20 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 { end -= 1 }
        guard start < end else { return nil }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}

