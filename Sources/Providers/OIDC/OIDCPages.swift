public import AuthKernel
import Foundation
import HTTPTypes
import Logging

/// The web flow on authd's pages (contract §16). `GET /login/oidc/NAME` sends the browser to the
/// identity provider with PKCE (S256), a `state` and a `nonce`, all kept in the browser's sealed
/// pre-sign-in cookie; `GET /login/oidc/NAME/callback` takes the answer only with that cookie's
/// `state` (once, within 10 minutes), refuses an RFC 9207 `iss` that is not the upstream's,
/// exchanges the code and signs in by the account rules, on to where the sign-in was going (an
/// app's authorize request, so authd can sit between an app and Google). `/account` links one
/// (`?link=1`, from a fresh sign-in) to the signed-in person.
extension OIDCProvider: PageSignIn {
    /// The buttons on `/login` and the list on `/account`, the files in `Pages/`.
    public static let pageTemplates = [
        PageTemplateDeclaration("oidc.start", PackageResources.start_mustache),
        PageTemplateDeclaration("oidc.account", PackageResources.account_mustache),
    ]

    /// How long the person may take at the identity provider.
    static let flowLifetime: TimeInterval = 600
    /// The purpose a callback's spent `state` is kept under.
    static let statePurpose = "oidc.state"

    /// The upstreams `/login` offers, in name order.
    var webUpstreams: [OIDCUpstream] { settings.upstreams.values.filter(\.web).sorted { $0.name < $1.name } }

    /// A "Continue with …" link per upstream.
    public func loginStep() -> PageStep? {
        let rows = webUpstreams.map { ["name": PageValue.text($0.name), "label": .text($0.label)] }
        return rows.isEmpty ? nil : PageStep(template: "oidc.start", values: ["upstreams": .list(rows)])
    }

    /// No forms: the web flow is links and redirects.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        throw AuthError.notFound()
    }

    /// `NAME` starts the flow; `NAME/callback` finishes it.
    public func pageGet(path: String, query: PageForm, state: inout [String: String], browser: Principal?, context: AuthRequestContext) async throws
        -> PageOutcome
    {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard let first = parts.first, let upstream = settings.upstreams[String(first)], upstream.web else {
            throw AuthError.notFound("No identity provider of that name.").worded("oidc.error.no_provider")
        }
        switch parts.count {
        case 1:
            return try await start(upstream, link: query["link"] != nil, state: &state, browser: browser)
        case 2 where parts[1] == "callback":
            let pending = state
            state = [:]  // whatever happens, this flow is over
            return try await callback(upstream, query: query, pending: pending, browser: browser, context: context)
        default:
            throw AuthError.notFound()
        }
    }

    /// The identity providers on `/account`: which are linked, and a link to add each other one.
    public func accountStep(for principal: Principal) -> PageStep? {
        let rows: [[String: PageValue]] = webUpstreams.map { upstream in
            let linked = principal.user.identities.contains { $0.provider == upstream.name }
            return ["name": .text(upstream.name), "label": .text(upstream.label), "linked": .flag(linked)]
        }
        return rows.isEmpty ? nil : PageStep(template: "oidc.account", values: ["upstreams": .list(rows)])
    }

    /// `{issuer}/login/oidc/NAME/callback`: what the upstream registers as authd's redirect URI.
    func redirectURI(_ upstream: OIDCUpstream) -> String { kernel.issuer + "/login/oidc/\(upstream.name)/callback" }

    /// The upstream's endpoints: configured, else discovered (503 while it cannot be reached).
    func endpoints(_ upstream: OIDCUpstream) async throws -> (authorize: String, token: String, issParameter: Bool, basicAuth: Bool) {
        guard upstream.kind != .github, let verifier = verifiers[upstream.name] else {
            return (upstream.authorizeURL ?? "", upstream.tokenURL ?? "", false, false)
        }
        let (document, _) = try await verifier.discovery.current()
        guard let authorize = upstream.authorizeURL ?? document.authorizationEndpoint.flatMap({ upstream.allowsDiscovered($0) ? $0 : nil }),
            let token = upstream.tokenURL ?? document.tokenEndpoint.flatMap({ upstream.allowsDiscovered($0) ? $0 : nil })
        else { throw OIDCDiscovery.unavailable(upstream.name) }
        // OpenID Connect's default is Basic; an upstream that lists only `client_secret_post` gets the body.
        let methods = document.tokenEndpointAuthMethods ?? ["client_secret_basic"]
        return (authorize, token, document.issParameterSupported == true, methods.contains("client_secret_basic"))
    }

    func start(_ upstream: OIDCUpstream, link: Bool, state: inout [String: String], browser: Principal?) async throws -> PageOutcome {
        if link {
            guard let browser else {
                throw AuthError(status: .unauthorized, code: "UNAUTHORIZED", message: "Sign in first, then link it from your account page.")
                    .worded("oidc.error.sign_in_first")
            }
            // Linking adds a way in: a sign-in as old as a stolen cookie's is not enough.
            try kernel.sessions.requireFresh(browser)
        }
        let authorize = try await endpoints(upstream).authorize
        let flow = Base64URL.encode(SecureRandom.bytes(24)), verifier = Base64URL.encode(SecureRandom.bytes(32))
        state = ["name": upstream.name, "state": flow, "verifier": verifier, "started": String(Int(kernel.clock.now().timeIntervalSince1970))]
        var query = [
            ("response_type", "code"), ("client_id", upstream.clientID), ("redirect_uri", redirectURI(upstream)),
            ("scope", upstream.scopes.joined(separator: " ")), ("state", flow), ("code_challenge", Base64URL.encode(SHA256.hash(verifier))),
            ("code_challenge_method", "S256"),
        ]
        if upstream.kind != .github {
            let nonce = Base64URL.encode(SecureRandom.bytes(24))
            state["nonce"] = nonce
            query.append(("nonce", nonce))
        }
        if link, let browser { state["link"] = browser.session.id.lowercased }
        return .redirect(to: authorize + (authorize.contains("?") ? "&" : "?") + FormEncoding.encode(query))
    }

    /// The upstream's answer: `state` first (nothing else is read from a request this browser did
    /// not start), then its error or its code.
    func callback(_ upstream: OIDCUpstream, query: PageForm, pending: [String: String], browser: Principal?, context: AuthRequestContext)
        async throws -> PageOutcome
    {
        try await kernel.rateLimiter.consume(settings.attemptsPerIP, key: "oidc.ip:\(context.clientKey)")
        let now = kernel.clock.now()
        let expired = AuthError(
            status: .badRequest, code: "INVALID_STATE", message: "This sign-in with \(upstream.label) was not started in this browser, or it took too long. Start again."
        ).worded("oidc.error.expired", ["label": upstream.label])
        guard pending["name"] == upstream.name, let flow = pending["state"], let verifier = pending["verifier"],
            let started = pending["started"].flatMap(TimeInterval.init), let returned = query["state"],
            ConstantTime.equals(Array(returned.utf8), Array(flow.utf8)), now.timeIntervalSince1970 < started + Self.flowLifetime
        else {
            kernel.logger.info("identity provider's answer without its sign-in", metadata: ["oidc.provider": "\(upstream.name)", "request.ip": "\(context.clientIP)"])
            throw expired
        }
        // Once, on every instance: a callback URL seen again (a shared link, the back button) does nothing.
        guard try await kernel.tokens.firstUse(purpose: Self.statePurpose, value: flow, until: Date(timeIntervalSince1970: started + Self.flowLifetime)) else {
            throw expired
        }
        if let error = query["error"] {
            kernel.logger.info("identity provider did not sign in", metadata: ["oidc.provider": "\(upstream.name)", "error": "\(LogSafe.text(error, maxLength: 80))"])
            let cancelled = error == "access_denied"
            let said = cancelled ? "The sign-in was cancelled at \(upstream.label)." : "\(upstream.label) did not sign you in."
            throw AuthError(status: .unauthorized, code: "INVALID_ID_TOKEN", message: said + " Try again or another way.")
                .worded(cancelled ? "oidc.error.cancelled" : "oidc.error.refused", ["label": upstream.label])
        }
        let endpoints = try await endpoints(upstream)
        // RFC 9207: an answer naming another issuer came from another identity provider (a mix-up attack).
        // Microsoft's answers would name the tenant's own issuer: that one is held to the token's `iss` below.
        if upstream.kind != .github, upstream.kind != .microsoft, query["iss"] != upstream.issuer, query["iss"] != nil || endpoints.issParameter {
            kernel.logger.warning("identity provider's answer names another issuer", metadata: ["oidc.provider": "\(upstream.name)"])
            await kernel.audit.record("sign_in_failed", provider: Self.id, reason: "ISSUER_MISMATCH")
            throw AuthError(status: .unauthorized, code: "INVALID_ID_TOKEN", message: "That answer did not come from \(upstream.label). Start again.")
                .worded("oidc.error.other_issuer", ["label": upstream.label])
        }
        guard let code = query["code"], !code.isEmpty, code.utf8.count <= 2048 else {
            throw AuthError.invalidRequest("\(upstream.label) sent no code. Start again.", field: "code").worded("oidc.error.no_code", ["label": upstream.label])
        }
        let failed = AuthError(status: .unauthorized, code: "INVALID_ID_TOKEN", message: "Signing in with \(upstream.label) did not work. Start again.")
            .worded("oidc.error.failed", ["label": upstream.label])
        let identity: OIDCTokenVerifier.Identity
        do {
            let answer = try await OIDCTokenRequest(
                url: endpoints.token, clientID: upstream.clientID, clientSecret: upstream.clientSecret, basicAuth: endpoints.basicAuth, code: code,
                redirectURI: redirectURI(upstream), verifier: verifier
            ).send(kernel.http, upstream: upstream.name)
            if upstream.kind == .github {
                guard let token = answer.accessToken, let api = upstream.apiURL else { throw OIDCTokenRequest.Refused(description: "no access token") }
                identity = try await GitHubUserAPI(apiURL: api, http: kernel.http)
                    .identity(accessToken: token, upstream: upstream.name, expiresAt: now.addingTimeInterval(Self.flowLifetime))
            } else {
                guard let token = answer.idToken, let tokenVerifier = verifiers[upstream.name] else {
                    throw OIDCTokenRequest.Refused(description: "no ID token")
                }
                identity = try await verified(token, by: tokenVerifier, nonce: pending["nonce"], web: true, device: nil, context: context)
                if upstream.kind == .microsoft, let iss = query["iss"], iss != identity.issuer {
                    kernel.logger.warning("identity provider's answer names another issuer", metadata: ["oidc.provider": "\(upstream.name)"])
                    await kernel.audit.record("sign_in_failed", provider: Self.id, reason: "ISSUER_MISMATCH")
                    throw AuthError(status: .unauthorized, code: "INVALID_ID_TOKEN", message: "That answer did not come from \(upstream.label). Start again.")
                        .worded("oidc.error.other_issuer", ["label": upstream.label])
                }
            }
        } catch let error as AuthError where error.status == .serviceUnavailable {
            throw error
        } catch let error as AuthError where error.code == AuthError.invalidIDToken.code {
            throw failed
        } catch {
            kernel.logger.info("identity provider's code refused", metadata: ["oidc.provider": "\(upstream.name)", "reason": "\(error)"])
            await kernel.audit.record("sign_in_failed", provider: Self.id, reason: AuthError.invalidIDToken.code)
            throw failed
        }
        if let session = pending["link"] {
            // The link goes to the sign-in that asked for it, still this browser's.
            guard let browser, browser.session.id.lowercased == session else {
                throw AuthError(status: .unauthorized, code: "UNAUTHORIZED", message: "Your sign-in changed meanwhile. Link it again from your account page.")
                    .worded("oidc.error.session_changed")
            }
            _ = try await account(for: identity, upstream: upstream, principal: browser)
            return .redirect(to: "/account")
        }
        let user = try await account(for: identity, upstream: upstream, principal: nil)
        return .signedIn(user, amr: [Self.id], device: .none)
    }
}
