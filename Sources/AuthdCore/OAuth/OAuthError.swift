import AuthKernel
import AuthStorage
import Foundation
import Hummingbird
import NIOCore

/// An error of the `/oauth/*` endpoints in RFC 6749 §5.2's shape, `{"error","error_description"}`,
/// with `Cache-Control: no-store` (contract §7): what generic OAuth clients read.
struct OAuthError: Error, HTTPResponseError, Sendable {
    var status: HTTPResponse.Status
    /// The RFC's code: `invalid_request`, `invalid_grant`, `authorization_pending`, …
    var error: String
    var description: String
    var retryAfter: Int?

    init(_ error: String, _ description: String, status: HTTPResponse.Status = .badRequest, retryAfter: Int? = nil) {
        self.status = status
        self.error = error
        self.description = description
        self.retryAfter = retryAfter
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var w = JSONWriter(capacity: 160)
        w.beginObject()
        w.key("error"); w.string(error)
        w.key("error_description"); w.string(description)
        w.endObject()
        var response = w.response(status: status)
        response.headers[.cacheControl] = "no-store"
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    /// The OAuth form of an error the kernel or Hummingbird threw inside an `/oauth` route.
    static func from(_ error: any Error) -> OAuthError {
        switch error {
        case let error as OAuthError: return error
        case let error as AuthError:
            switch error.status {
            case .tooManyRequests:
                var retry: Int?
                if case .number(let n) = error.details?["retry_after"] { retry = Int(n) }
                // RFC 6749 has no code for "too many": invalid_request with Retry-After (`slow_down` is the
                // device flow's, answered by its own routes).
                return OAuthError("invalid_request", error.message, status: .tooManyRequests, retryAfter: retry)
            case .serviceUnavailable: return OAuthError("temporarily_unavailable", error.message, status: .serviceUnavailable, retryAfter: error.retryAfter)
            case .forbidden: return OAuthError("access_denied", error.message, status: .forbidden)
            case .unauthorized: return OAuthError("invalid_client", error.message, status: .unauthorized)
            case .contentTooLarge: return OAuthError("invalid_request", error.message, status: .contentTooLarge)
            case .unsupportedMediaType: return OAuthError("invalid_request", error.message, status: .unsupportedMediaType)
            default: return OAuthError("invalid_request", error.message, status: error.status.code < 500 ? .badRequest : .internalServerError)
            }
        case is StoreError:
            return OAuthError("temporarily_unavailable", AuthError.unavailable.message, status: .serviceUnavailable, retryAfter: AuthError.unavailable.retryAfter)
        case is NIOTooManyBytesError:
            return OAuthError("invalid_request", "The body is over 64 KiB.", status: .contentTooLarge)
        case let error as HTTPError where error.status == .contentTooLarge:
            return OAuthError("invalid_request", "The body is over 64 KiB.", status: .contentTooLarge)
        default:
            return OAuthError("server_error", "The server could not answer.", status: .internalServerError)
        }
    }
}

/// Renders every error of the `/oauth` group in OAuth's shape, and marks every answer `no-store`.
struct OAuthErrorMiddleware: RouterMiddleware {
    typealias Context = AuthRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            var response = try await next(request, context)
            response.headers[.cacheControl] = "no-store"
            return response
        } catch {
            throw OAuthError.from(error)
        }
    }
}
