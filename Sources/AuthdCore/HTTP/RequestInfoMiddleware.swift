package import AuthKernel
package import Hummingbird
import HTTPTypes

/// Gives every request an id (`X-Request-Id` in the answer, `request.id` on every log line) and
/// settles the client's address, believing `X-Forwarded-For` only from ``TrustedProxies``, and the
/// language of its answer (``RequestLanguage``).
package struct RequestInfoMiddleware: RouterMiddleware {
    package typealias Context = AuthRequestContext
    let proxies: TrustedProxies
    let messages: Messages

    /// Creates the middleware.
    package init(proxies: TrustedProxies, messages: Messages) {
        self.proxies = proxies
        self.messages = messages
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.clientIP = proxies.clientAddress(peer: context.clientIP, forwardedFor: request.headers[.xForwardedFor])
        context.clientKey = ClientNetwork.key(for: context.clientIP)
        context.userAgent = request.headers[.userAgent]
        let info = RequestInfo(id: context.id, clientIP: context.clientIP)
        do {
            let language = RequestLanguage(acceptLanguage: request.headers[.acceptLanguage], messages: messages)
            var response = try await RequestInfo.$current.withValue(info) {
                try await RequestLanguage.$current.withValue(language) { try await next(request, context) }
            }
            response.headers[.xRequestID] = info.id
            return response
        } catch let error as any HTTPResponseError {
            var response = try error.response(from: request, context: context)
            response.headers[.xRequestID] = info.id
            return response
        }
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xRequestID = Self("X-Request-Id")!
}
