package import AuthKernel
import AuthStorage
package import Hummingbird
import Logging
import NIOCore

/// Renders every error in the contract's format: framework errors (unknown route, body too large)
/// are translated, store failures become 503, anything unexpected becomes 500 and is logged.
package struct ErrorRenderingMiddleware: RouterMiddleware {
    package typealias Context = AuthRequestContext

    let routes: RouteTable?

    /// Creates the middleware; with `routes`, a known path asked with another method gets 405 and `Allow`.
    package init(routes: RouteTable? = nil) { self.routes = routes }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as AuthError {
            throw error
        } catch let error as OAuthError {
            throw error  // the /oauth routes' own shape (RFC 6749 §5.2)
        } catch is NIOTooManyBytesError {
            throw AuthError.payloadTooLarge
        } catch let error as HTTPError {
            switch error.status {
            case .notFound:
                if let allowed = routes?.methods(for: request.uri.path), !allowed.isEmpty {
                    throw AuthError(
                        status: .methodNotAllowed, code: "INVALID_REQUEST",
                        message: "\(request.uri.path) does not accept \(request.method); it accepts \(allowed.joined(separator: ", ")).",
                        details: ["allow": .array(allowed.map { .string($0) })]
                    )
                }
                throw AuthError.notFound("No such endpoint: \(request.method) \(request.uri.path).")
            case .contentTooLarge: throw AuthError.payloadTooLarge
            case .methodNotAllowed: throw AuthError(status: .methodNotAllowed, code: "INVALID_REQUEST", message: "This endpoint does not accept \(request.method).")
            default:
                throw AuthError(status: error.status, code: "INVALID_REQUEST", message: error.body ?? "The request is not valid.")
            }
        } catch let error as StoreError {
            context.logger.error("refusing a write (503): the store cannot persist changes until the disk accepts writes again", metadata: ["error": "\(error)"])
            throw AuthError.unavailable
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            throw AuthError.internal
        }
    }
}
