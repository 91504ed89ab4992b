import AuthKernel
import AuthStorage
import Foundation
import Hummingbird
import Logging

/// `/oauth/device_authorization` and `/oauth/token` (contract §7): the device flow of RFC 8628 and
/// the refresh grant, in OAuth's wire format, so generic device-flow clients work unchanged.
struct OAuthRoutes: Sendable {
    let kernel: Kernel
    let devices: DeviceAuthorizations
    let issuer: IssuerName
    let serviceKeys: ServiceKeys
    /// The OpenID Provider, for the authorization-code grant.
    let openID: OpenIDRoutes?

    static let deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

    func add(to router: Router<AuthRequestContext>) {
        let oauth = router.group("oauth").add(middleware: OAuthErrorMiddleware())
        let kernel = self.kernel, devices = self.devices, issuer = self.issuer, serviceKeys = self.serviceKeys, openID = self.openID

        oauth.post("device_authorization") { request, context -> Response in
            do {
                try await kernel.rateLimiter.consume(
                    devices.settings.startsPerIP, key: "device.start.ip:\(context.clientKey)",
                    message: "Too many device sign-ins started from this network. Wait before trying again.")
            } catch let error as AuthError where error.status == .tooManyRequests {
                // The device flow's own word for "too often" (RFC 8628 §3.5); elsewhere a 429 is RFC 6749's.
                throw OAuthError("slow_down", error.message, status: .tooManyRequests, retryAfter: error.retryAfter)
            }
            let parameters = try await OAuthParameters.read(request, context: context, reading: OAuthParameters.deviceAuthorization)
            let clientID = try Self.clientID(parameters)
            let device: DeviceInfo
            do { device = try DeviceInfo(name: parameters["device_name"], platform: parameters["platform"]) } catch let error as AuthError {
                throw OAuthError("invalid_request", error.message)
            }
            let started = try await devices.start(clientID: clientID, device: device)
            let uri = devices.settings.verificationURI ?? issuer.value + "/device"
            var w = JSONWriter(capacity: 384)
            w.beginObject()
            w.key("device_code"); w.string(started.deviceCode)
            w.key("user_code"); w.string(started.userCode)
            w.key("verification_uri"); w.string(uri)
            w.key("verification_uri_complete"); w.string(uri + "?user_code=" + started.userCode)
            w.key("expires_in"); w.int(started.expiresIn)
            w.key("interval"); w.int(started.interval)
            w.endObject()
            return w.response()
        }

        if let openID {
            oauth.post("revoke") { request, context -> Response in
                try await openID.revoke(try await OAuthParameters.read(request, context: context, reading: OAuthParameters.tokenQuery), request, context)
            }
        }

        oauth.post("introspect") { request, context -> Response in
            try await Self.introspect(request, context, kernel: kernel, serviceKeys: serviceKeys, openID: openID)
        }

        oauth.post("token") { request, context -> Response in
            let parameters = try await OAuthParameters.read(request, context: context, reading: OAuthParameters.token(grant:))
            switch parameters["grant_type"] {
            case Self.deviceCodeGrant?:
                guard let deviceCode = parameters["device_code"] else { throw OAuthError("invalid_request", "The parameter `device_code` is required.") }
                switch try await devices.poll(deviceCode: deviceCode, clientID: try Self.clientID(parameters)) {
                case .session(let session): return try Self.tokenResponse(session)
                case .authorizationPending: throw OAuthError("authorization_pending", "The person has not approved this device yet.")
                case .slowDown: throw OAuthError("slow_down", "Polling too often: wait 5 seconds longer between polls.")
                case .accessDenied: throw OAuthError("access_denied", "The person denied this device.")
                case .expiredToken: throw OAuthError("expired_token", "The device code has expired. Start again.")
                case .invalidGrant: throw OAuthError("invalid_grant", "The device code is not valid, was used already, or belongs to another client.")
                }
            case "authorization_code"? where openID != nil:
                return try await openID!.token(parameters, request, context)
            case "refresh_token"?:
                // A registered OpenID client's refresh, with its authentication (an authd session's token
                // presented so is refused there); a device-flow client's `client_id` names no such client.
                if let openID, try await openID.isClientRequest(parameters, request) { return try await openID.refresh(parameters, request, context) }
                guard let token = parameters["refresh_token"] else { throw OAuthError("invalid_request", "The parameter `refresh_token` is required.") }
                do {
                    return try Self.tokenResponse(try await kernel.sessions.refresh(token))
                } catch let error as AuthError where error.status == .unauthorized {
                    throw OAuthError("invalid_grant", error.message)
                }
            case nil:
                throw OAuthError("invalid_request", "The parameter `grant_type` is required.")
            case let other?:
                throw OAuthError("unsupported_grant_type", "authd issues tokens for the device_code and refresh_token grants, not `\(LogSafe.text(other, maxLength: 64))`.")
            }
        }
    }

    /// RFC 7662 for resource servers holding a service key: whether an access token, an API key or
    /// a client access token is still active. An OpenID client may authenticate with its own
    /// credentials instead, and learns only about tokens issued to it. A token whose session or key
    /// has ended, expired or been disabled is `{"active":false}`.
    static func introspect(
        _ request: Request, _ context: AuthRequestContext, kernel: Kernel, serviceKeys: ServiceKeys, openID: OpenIDRoutes?
    ) async throws -> Response {
        let parameters = try await OAuthParameters.read(request, context: context, reading: OAuthParameters.tokenQuery)
        var caller: String?, asking: OpenIDClient?
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            caller = try await serviceKeys.verify(BearerAuthenticator.bearerToken(header) ?? "")
        } else if let openID, try await openID.isClientRequest(parameters, request) {
            asking = try await openID.authenticatedClient(parameters, request, context)
        }
        let askingClient = asking?.id
        guard caller != nil || askingClient != nil else {
            var error = try OAuthError(
                "invalid_client", "Send a service key (authd service-keys create) as the Bearer token, or a client's credentials.", status: .unauthorized
            )
            .response(from: request, context: context)
            error.headers[.wwwAuthenticate] = "Bearer"
            return error
        }
        guard let token = parameters["token"] else { throw OAuthError("invalid_request", "The parameter `token` is required.") }
        if let openID, let claims = try await openID.introspectClientToken(token, askedBy: askingClient) {
            // A public client proved nothing but by the token: one of its own live ones charges the
            // app, any other the sender's network (contract §17).
            if let asking, asking.isPublic {
                try await claims["active"] == .bool(true) ? openID.chargeClient(asking) : openID.chargeNetwork(context)
            }
            var w = JSONWriter(capacity: 256)
            w.value(.object(claims))
            return w.response()
        }
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        if let asking {
            // A client asks only about its own tokens.
            if asking.isPublic, let openID { try await openID.chargeNetwork(context) }
            w.key("active"); w.bool(false)
        } else if token.hasPrefix(SessionService.apiKeyPrefix) {
            if let (key, user) = try await kernel.sessions.activeAPIKey(token) {
                w.key("active"); w.bool(true)
                w.key("sub"); w.string(user.id.lowercased)
                w.key("sid"); w.string(key.id.lowercased)
                w.key("amr"); w.strings(key.amr)
                if key.expiresAt < SessionRecord.neverExpires { w.key("exp"); w.int(Int(key.expiresAt.timeIntervalSince1970)) }
                w.key("token_type"); w.string("api_key")
            } else {
                w.key("active"); w.bool(false)
            }
        } else if let principal = try? await kernel.sessions.authenticate(bearer: token), principal.user.disabledAt == nil {
            w.key("active"); w.bool(true)
            w.key("sub"); w.string(principal.user.id.lowercased)
            w.key("sid"); w.string(principal.session.id.lowercased)
            w.key("amr"); w.strings(principal.claims.amr)
            w.key("exp"); w.int(principal.claims.exp)
            w.key("iat"); w.int(principal.claims.iat)
            w.key("token_type"); w.string("Bearer")
        } else {
            w.key("active"); w.bool(false)
        }
        w.endObject()
        kernel.logger.debug("introspection", metadata: ["service_key": "\(caller ?? "-")", "client.id": "\(askingClient ?? "-")"])
        return w.response()
    }

    /// `client_id` is optional and free-form (authd has no registered clients); bounded before it is stored.
    static func clientID(_ parameters: OAuthParameters) throws -> String? {
        guard let id = parameters["client_id"] else { return nil }
        guard id.utf8.count <= 128, id.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw OAuthError("invalid_request", "The parameter `client_id` must be 1 to 128 visible ASCII characters.")
        }
        return id
    }

    /// RFC 6749 §5.1's fields plus the contract's `user`: the session response as it is.
    static func tokenResponse(_ session: SessionResponse) throws -> Response {
        var w = JSONWriter(capacity: 768)
        w.beginObject()
        w.key("access_token"); w.string(session.accessToken)
        w.key("refresh_token"); w.string(session.refreshToken)
        w.key("token_type"); w.string(session.tokenType)
        w.key("expires_in"); w.int(session.expiresIn)
        w.key("user"); session.user.write(to: &w)
        w.endObject()
        return w.response()
    }
}
