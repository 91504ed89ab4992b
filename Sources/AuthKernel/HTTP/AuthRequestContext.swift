public import Hummingbird
import Logging
import NIOCore

/// The request context of every authd route: the core context, the client's address, and the
/// signed-in principal once `BearerAuthenticator` has run.
public struct AuthRequestContext: RequestContext {
    /// Hummingbird's core storage.
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address, for per-IP rate limits, logs and audit events: the peer's, or what a
    /// trusted proxy forwarded (see `RequestInfoMiddleware`).
    public package(set) var clientIP: String
    /// What per-client rate limits count under: the IPv4 address, or the /64 of an IPv6 address
    /// (one subscriber's network), written `2001:db8:0:1::/64`.
    public package(set) var clientKey: String
    /// The signed-in user and session, when the request carried a valid Bearer token.
    public var principal: Principal?

    /// The client's network as a person's requests come from it (contract §12): the IPv4 /24
    /// (`203.0.113.0/24`) or the IPv6 /48 of ``clientIP``.
    public var clientNetwork: String { ClientNetwork.network(for: clientIP) }

    /// The request's `User-Agent` header (at most 512 bytes are read of it).
    package var userAgent: String?

    /// The browser and system the `User-Agent` names ("Firefox on Windows"), for naming a browser's
    /// session or request on a page; nil when it names neither.
    public var browser: String? { BrowserLabel.label(userAgent) }

    /// The contract's body limit: larger bodies get 413.
    public var maxUploadSize: Int { 64 * 1024 }

    /// Creates a context for a request arriving on a channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientIP = source.channel.remoteAddress?.ipAddress ?? "unknown"
        clientKey = ClientNetwork.key(for: clientIP)
    }

    /// The principal, or 401 `UNAUTHORIZED` when the request is not signed in.
    public func requirePrincipal() throws(AuthError) -> Principal {
        guard let principal else { throw AuthError.unauthorized }
        return principal
    }
}
