import AuthKernel
import Foundation
import HTTPTypes
import JWTKit
import Logging

/// An upstream's discovery document and key set, fetched through `kernel.http`: the document
/// cached for an hour and fetched again at most once a minute after a failure, the keys by the
/// SDK's ``RemoteKeySet`` (refetched for an unknown `kid` at most once a minute). While the
/// upstream cannot be reached its sign-ins answer 503; authd starts regardless.
actor OIDCDiscovery {
    struct Document: Decodable, Sendable {
        var issuer: String
        var jwksURI: String
        var authorizationEndpoint: String?
        var tokenEndpoint: String?
        /// RFC 9207: its authorization responses carry `iss`, so one without it is refused.
        var issParameterSupported: Bool?
        var tokenEndpointAuthMethods: [String]?
        enum CodingKeys: String, CodingKey {
            case issuer, jwksURI = "jwks_uri", authorizationEndpoint = "authorization_endpoint", tokenEndpoint = "token_endpoint"
            case issParameterSupported = "authorization_response_iss_parameter_supported"
            case tokenEndpointAuthMethods = "token_endpoint_auth_methods_supported"
        }
    }

    let upstream: OIDCUpstream
    let kernel: Kernel
    private var document: (value: Document, keys: RemoteKeySet, fetchedAt: Date)?
    private var lastFailure: Date?
    /// The fetch under way: callers meanwhile share it (the actor is re-entered while it waits).
    private var inflight: Task<Document, any Error>?

    static let maxAge: TimeInterval = 3600
    static let retryAfter: TimeInterval = 60

    init(upstream: OIDCUpstream, kernel: Kernel) {
        self.upstream = upstream
        self.kernel = kernel
    }

    var url: String { upstream.issuer + "/.well-known/openid-configuration" }

    /// The document and its key set; 503 `UNAVAILABLE` while the upstream cannot be reached.
    func current() async throws(AuthError) -> (Document, RemoteKeySet) {
        let now = kernel.clock.now()
        if let document, now.timeIntervalSince(document.fetchedAt) < Self.maxAge { return (document.value, document.keys) }
        if let lastFailure, now.timeIntervalSince(lastFailure) < Self.retryAfter {
            if let document { return (document.value, document.keys) }  // stale, but what it said last
            throw Self.unavailable(upstream.name)
        }
        do {
            let task = inflight ?? Task { try await fetch() }
            inflight = task
            defer { inflight = nil }
            let fetched = try await task.value
            if let document, document.fetchedAt >= now { return (document.value, document.keys) }  // another caller stored it
            let keys: RemoteKeySet
            if let document, document.value.jwksURI == fetched.jwksURI {
                keys = document.keys
            } else {
                keys = RemoteKeySet(
                    name: upstream.name, url: fetched.jwksURI, refetchInterval: 60, http: kernel.http, clock: kernel.clock, logger: kernel.logger,
                    validate: { json in _ = try await OIDCKeys.load(json: json) })
            }
            document = (fetched, keys, now)
            lastFailure = nil
            return (fetched, keys)
        } catch {
            lastFailure = now
            kernel.logger.warning(
                "identity provider's discovery document unavailable", metadata: ["oidc.provider": "\(upstream.name)", "error": "\(error)"])
            if let document { return (document.value, document.keys) }
            throw Self.unavailable(upstream.name)
        }
    }

    static func unavailable(_ name: String) -> AuthError {
        AuthError.upstreamUnavailable(provider: name, message: "Signing in with \(name) is not possible right now. Try again later or another way.")
            .worded("oidc.error.unavailable", ["name": name])
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    private func fetch() async throws -> Document {
        let response = try await kernel.http.send(OutboundRequest(url: url, headers: [.accept: "application/json"], maxResponseBytes: 256 * 1024))
        guard response.status == .ok else { throw Refused(description: "HTTP \(response.status.code)") }
        let document = try JSONDecoder().decode(Document.self, from: Data(response.body))
        // The document must be the configured issuer's (a Microsoft one names `{tenantid}` in it).
        guard document.issuer == upstream.issuer || (upstream.kind == .microsoft && document.issuer.contains("{tenantid}")) else {
            throw Refused(description: "the document's issuer \(LogSafe.text(document.issuer, maxLength: 200)) is not the configured one")
        }
        guard upstream.allowsDiscovered(document.jwksURI) else { throw Refused(description: "jwks_uri is not https") }
        return document
    }
}
