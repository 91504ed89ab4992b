public import Hummingbird
import Logging

/// Reads `Authorization: Bearer …` and puts the verified ``Principal`` in the context.
///
/// No header: the request goes on unauthenticated (routes that need a user call
/// ``AuthRequestContext/requirePrincipal()``). A header that is present but wrong, or whose session
/// has ended, is refused with 401 at once, so a sign-in that meant to link an identity never silently
/// creates another account instead.
public struct BearerAuthenticator: RouterMiddleware {
    public typealias Context = AuthRequestContext
    let sessions: SessionService

    /// Creates the middleware.
    public init(sessions: SessionService) { self.sessions = sessions }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else { return try await next(request, context) }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else { throw AuthError.unauthorized }
        var context = context
        let principal = try await sessions.authenticate(bearer: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
        context.principal = principal
        context.logger[metadataKey: "user.id"] = "\(principal.user.id)"
        return try await next(request, context)
    }
}

import Foundation
