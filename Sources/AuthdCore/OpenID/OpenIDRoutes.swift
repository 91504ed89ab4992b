import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// authd as an OpenID Provider (contract §13): discovery, authorize with PKCE and consent on
/// authd's pages, the authorization-code and refresh grants, userinfo, revocation, introspection of
/// client tokens and logout (``addLogout(to:)``); ID tokens and client access tokens signed with the
/// client's algorithm, RS256 by default.
struct OpenIDRoutes: Sendable {
    let kernel: Kernel
    let clients: OpenIDClients
    let codes: AuthorizationCodes
    let consents: ConsentGrants
    let tokens: OpenIDTokens
    let issuer: IssuerName
    let renderer: PageRenderer
    let login: LoginRoutes
    /// Seals a pending authorize request into the consent form.
    let box: SecretBox

    static let scopesSupported = ["openid", "profile", "email", "offline_access", "groups"]

    func add(to router: Router<AuthRequestContext>) {
        let routes = self
        router.get(".well-known/openid-configuration") { _, _ in routes.discovery() }
        router.get(".well-known/oauth-authorization-server") { _, _ in routes.discovery(authorizationServer: true) }
        router.get("oauth/authorize") { request, context in
            try await routes.login.guarded(request, context) { try await routes.authorize(request, context) }
        }
        router.post("oauth/authorize/consent") { request, context in
            try await routes.login.posted(request, context) { form in try await routes.consent(form, request) }
        }
        router.get("oauth/userinfo") { request, _ in try await routes.userinfo(request) }
        let api = router.group("api/v1/auth").add(middleware: BearerAuthenticator(sessions: kernel.sessions))
        api.get("grants") { _, context -> Response in try await routes.listGrants(try context.requirePrincipal()) }
        api.delete("grants/{client_id}") { _, context -> Response in
            let principal = try context.requirePrincipal()
            guard try await routes.endGrant(of: principal.user.id, client: context.parameters.get("client_id") ?? "") else {
                throw AuthError.notFound("No app holds a grant of this account with that client id.")
            }
            return Response(status: .noContent)
        }
        router.post("oauth/userinfo") { request, _ in try await routes.userinfo(request) }
        addLogout(to: router)
    }

    // MARK: - Discovery

    /// OpenID Connect Discovery 1.0; with `authorizationServer`, RFC 8414's metadata: the same plus
    /// the device authorization endpoint.
    func discovery(authorizationServer: Bool = false) -> Response {
        let base = issuer.value
        var document: [String: JSONValue] = [
            "issuer": .string(base), "authorization_endpoint": .string(base + "/oauth/authorize"), "token_endpoint": .string(base + "/oauth/token"),
            "userinfo_endpoint": .string(base + "/oauth/userinfo"), "jwks_uri": .string(base + "/.well-known/jwks.json"),
            "revocation_endpoint": .string(base + "/oauth/revoke"), "end_session_endpoint": .string(base + "/oauth/logout"),
            "introspection_endpoint": .string(base + "/oauth/introspect"),
            "response_types_supported": Self.list(["code"]), "response_modes_supported": Self.list(["query"]),
            "grant_types_supported": Self.list(["authorization_code", "refresh_token"]), "subject_types_supported": Self.list(["public"]),
            "code_challenge_methods_supported": Self.list(["S256"]), "id_token_signing_alg_values_supported": Self.list(tokens.algorithms),
            "token_endpoint_auth_methods_supported": Self.list(["client_secret_basic", "client_secret_post", "none"]),
            "scopes_supported": Self.list(Self.scopesSupported),
            "claims_supported": Self.list(["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "sid", "email", "email_verified", "name", "preferred_username", "locale", "groups"]),
            "request_parameter_supported": .bool(false), "request_uri_parameter_supported": .bool(false), "claims_parameter_supported": .bool(false),
            "authorization_response_iss_parameter_supported": .bool(true),
        ]
        if authorizationServer {
            document["device_authorization_endpoint"] = .string(base + "/oauth/device_authorization")
            document["grant_types_supported"] = Self.list(["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"])
        }
        var w = JSONWriter(capacity: 1024)
        w.value(.object(document))
        var response = w.response()
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }

    static func list(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }

    // MARK: - Authorize

    /// An authorize request as checked: what a code will be bound to.
    struct Pending: Codable, Sendable {
        var clientID: String
        var redirectURI: String
        var state: String?
        var nonce: String?
        var codeChallenge: String?
        var scopes: [String]
        var expiresAt: Int
    }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    func errorPage(_ text: String) -> Response { login.message(text, status: .badRequest, title: kernel.messages.text("consent.error.title")) }

    /// Back to the client with an error (only once the client and its redirect URI are known good).
    func redirect(_ uri: String, _ parameters: [(String, String?)]) -> Response {
        var c = URLComponents(string: uri)!
        // Each value percent-encoded but for RFC 3986's unreserved characters: a `+` in `state` must
        // not come back as a space to a client that decodes the query as a form.
        let added = parameters.compactMap { name, value in
            value.map { URLQueryItem(name: name, value: $0.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? "") }
        }
        let items = (c.percentEncodedQueryItems ?? []) + added
        c.percentEncodedQueryItems = items.isEmpty ? nil : items
        return PageGate.redirect(to: c.string!, status: .found)
    }

    func authorize(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        try await kernel.rateLimiter.consume(kernel.config.openID.authorizePerIP, key: "oidc.authorize:\(ClientNetwork.network(for: context.clientIP))")
        // Form-encoded, as OAuth clients send it (`+` is a space).
        let query = PageForm(urlencoded: request.uri.query ?? "")
        func value(_ name: String) -> String? { query[name].flatMap { $0.isEmpty || $0.utf8.count > 2048 ? nil : $0 } }
        // Until the client and its redirect URI are known good, errors stay on this page: never a redirect.
        // Each refusal is logged at info with what the operator needs to mend it (an app's settings).
        guard let clientID = value("client_id"), let client = try await clients.find(clientID) else {
            kernel.logger.info("authorize refused: no such client", metadata: ["client.id": "\(LogSafe.text(value("client_id") ?? "-", maxLength: 128))"])
            return errorPage(kernel.messages.text("consent.error.unknown_client"))
        }
        guard let redirectURI = value("redirect_uri"), client.allows(redirect: redirectURI) else {
            kernel.logger.info(
                "authorize refused: a redirect URI the client did not register",
                metadata: ["client.id": "\(client.id)", "client.name": "\(LogSafe.text(client.name, maxLength: 100))",
                           "redirect_uri": "\(LogSafe.text(value("redirect_uri") ?? "-", maxLength: 256))"])
            return errorPage(kernel.messages.text("consent.error.unknown_redirect"))
        }
        let state = value("state")
        func fail(_ error: String, _ description: String) -> Response {
            redirect(redirectURI, [("error", error), ("error_description", description), ("state", state), ("iss", issuer.value)])
        }
        guard value("response_type") == "code" else { return fail("unsupported_response_type", "Only response_type=code is supported.") }
        let scopes = (value("scope") ?? "").split(separator: " ").map(String.init).filter(Self.scopesSupported.contains)
        guard scopes.contains("openid") else { return fail("invalid_scope", "The scope must include openid.") }
        let challenge = value("code_challenge")
        if let challenge {
            guard value("code_challenge_method") == "S256", (43...128).contains(challenge.utf8.count) else {
                return fail("invalid_request", "PKCE: code_challenge_method must be S256, with a 43 to 128 character challenge.")
            }
        } else if client.isPublic || !client.pkceOptional {
            kernel.logger.info(
                "authorize refused: the client sent no PKCE (turn PKCE on in the app, or register it --pkce optional)",
                metadata: ["client.id": "\(client.id)", "client.name": "\(LogSafe.text(client.name, maxLength: 100))"])
            return fail("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256.")
        }
        // A confidential client registered `--pkce optional` may send neither PKCE nor a nonce (Gitea's
        // login source sends only `state`, contract §13): its code is then bound only to the client,
        // its secret and the redirect URI; docs/openid.md says what that gives up.
        let prompt = Set((value("prompt") ?? "").split(separator: " ").map(String.init))
        let now = kernel.clock.now()

        // Signed in, recently enough for max_age and prompt=login: a sign-in this very request asked
        // for is marked in the sealed pre-sign-in cookie, never in its parameters (contract §17). A
        // PIN alone signs in only to apps registered `--allow-pin`.
        let principal = try await login.browserPrincipal(request, acceptingPIN: client.allowPin)
        let pre = PreSignIn.unsealed(request, box: login.box, now: now)
        let asked = principal.map { pre?.marksFreshSignIn(for: query, signedInAt: $0.session.signedInAt) ?? false } ?? false
        let maxAge = value("max_age").flatMap(Int.init)
        var recentEnough = true
        if let maxAge, let principal,
            Int(principal.session.signedInAt.timeIntervalSince1970) < Int(now.timeIntervalSince1970) - maxAge
        {
            recentEnough = asked
        }
        if prompt.contains("login") { recentEnough = asked }
        guard let principal, recentEnough else {
            if prompt.contains("none") { return fail("login_required", "The person is not signed in.") }
            let returnTo = request.uri.description
            var ask = pre ?? PreSignIn.new(returnTo: returnTo, now: now)
            (ask.returnTo, ask.signInAfter, ask.freshFor) = (returnTo, prompt.contains("login") || maxAge != nil ? Int(now.timeIntervalSince1970) : nil, nil)
            var response = PageGate.redirect(
                to: "/login?return_to=" + (returnTo.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/"), status: .found)
            // An address too long to keep (PageGate.returnTo's bound) goes to the sign-in without it.
            if returnTo.utf8.count <= 1536 { response.setCookie(try ask.cookie(box: login.box)) }
            return response
        }
        // An app limited to groups: a person in none of them gets no code (contract §17).
        guard client.admits(principal.user) else {
            kernel.logger.info("an app refused a person outside its groups", metadata: ["client.id": "\(client.id)", "user.id": "\(principal.user.id.lowercased)"])
            if prompt.contains("none") { return fail("access_denied", "The person may not use this app.") }
            return noAccess(client)
        }
        let pending = Pending(
            clientID: client.id, redirectURI: redirectURI, state: state, nonce: value("nonce"), codeChallenge: challenge, scopes: scopes,
            expiresAt: Int(now.timeIntervalSince1970) + 600)
        var response: Response
        // A loopback or custom-scheme redirect of a public client may be any local process: it is asked
        // every time, first-party or not (RFC 8252 §8.6, contract §17).
        if client.isNativeRedirect(redirectURI) {
            if prompt.contains("none") { return fail("consent_required", "A native app's sign-in is confirmed by the person every time.") }
            response = try consentPage(pending, client: client, principal: principal)
        } else if client.firstParty {
            response = try await issueCode(pending, principal)
        } else if !prompt.contains("consent"), try await consents.covers(user: principal.user.id, client: client.id, scopes: Set(scopes)) {
            response = try await issueCode(pending, principal)
        } else {
            if prompt.contains("none") { return fail("consent_required", "The person has not allowed this app yet.") }
            response = try consentPage(pending, client: client, principal: principal)
        }
        // The mark of a sign-in this request asked for is spent with it.
        if asked { response.setCookie(PreSignIn.cookie("", maxAge: 0)) }
        return response
    }

    /// What a person outside an app's groups sees instead of the app.
    func noAccess(_ client: OpenIDClient) -> Response {
        login.message(kernel.messages.text("consent.no_access.message", ["client": client.name]), status: .forbidden, title: kernel.messages.text("consent.no_access.title"))
    }

    func consentPage(_ pending: Pending, client: OpenIDClient, principal: Principal) throws -> Response {
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        let sealed = box.seal(String(decoding: try JSONEncoder().encode(pending), as: UTF8.self))
        var words = pending.scopes.compactMap { ["email": "consent.scope.email", "profile": "consent.scope.profile"][$0].map { kernel.messages.text($0) } }
        if pending.scopes.contains("offline_access") { words.append(kernel.messages.text("consent.scope.offline_access")) }
        let values: [String: Any] = [
            "client": client.name, "scopes_text": words.joined(separator: kernel.messages.text("consent.scope.joiner")), "who": principal.user.email ?? principal.user.id.lowercased,
            "csrf": csrf, "request": sealed,
        ]
        return renderer.page(
            title: kernel.messages.text("consent.title", ["client": client.name]), content: renderer.render("consent", values), signedIn: true, csrf: csrf,
            formTarget: PageGate.formSource(pending.redirectURI))
    }

    func consent(_ form: PageForm, _ request: Request) async throws -> Response {
        guard let sealed = form["request"], let json = box.open(sealed), let pending = try? JSONDecoder().decode(Pending.self, from: Data(json.utf8)),
            pending.expiresAt > Int(kernel.clock.now().timeIntervalSince1970), let client = try await clients.find(pending.clientID)
        else { return login.message(kernel.messages.text("page.form_out_of_date_app"), status: .forbidden) }
        guard let principal = try await login.browserPrincipal(request, acceptingPIN: client.allowPin) else {
            return login.message(kernel.messages.text("consent.error.signed_out"), status: .forbidden)
        }
        guard login.carriesCSRF(form, of: principal) else {
            return login.message(kernel.messages.text("page.form_out_of_date_app"), status: .forbidden)
        }
        guard client.admits(principal.user) else { return noAccess(client) }
        guard form["decision"] == "allow" else {
            return redirect(pending.redirectURI, [("error", "access_denied"), ("error_description", "The person denied the request."), ("state", pending.state), ("iss", issuer.value)])
        }
        if !client.isNativeRedirect(pending.redirectURI) { try await consents.remember(user: principal.user.id, client: client.id, scopes: Set(pending.scopes)) }
        return try await issueCode(pending, principal)
    }

    func issueCode(_ pending: Pending, _ principal: Principal) async throws -> Response {
        let code = try await codes.issue(
            AuthorizationCodes.Grant(
                clientID: pending.clientID, redirectURI: pending.redirectURI, codeChallenge: pending.codeChallenge, nonce: pending.nonce,
                userID: principal.user.id.lowercased, sessionID: principal.session.id.lowercased, scopes: pending.scopes,
                authTime: Int(principal.session.signedInAt.timeIntervalSince1970), amr: principal.session.amr))
        return redirect(pending.redirectURI, [("code", code), ("state", pending.state), ("iss", issuer.value)])
    }

    // MARK: - Token

    /// Whether the request comes from a registered client: Basic authentication, or a `client_id`
    /// that names one (a device-flow client's does not).
    func isClientRequest(_ parameters: OAuthParameters, _ request: Request) async throws -> Bool {
        if request.headers[.authorization]?.lowercased().hasPrefix("basic ") == true { return true }
        guard let id = parameters["client_id"] else { return false }
        return try await clients.find(id) != nil
    }

    /// The client the request authenticates: Basic or the body's `client_id` and `client_secret`.
    ///
    /// A stranger who knows a client id must not spend that app's budget (contract §17): a
    /// confidential client's request is charged to it once it authenticated; a failed
    /// authentication is charged to the sender's network instead. A public client proves nothing
    /// here: the grant it presents does, and ``chargeClient(_:)`` is called once that is known valid.
    func authenticatedClient(_ parameters: OAuthParameters, _ request: Request, _ context: AuthRequestContext) async throws -> OpenIDClient {
        var clientID = parameters["client_id"], secret = parameters["client_secret"]
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)).map({ String(decoding: $0, as: UTF8.self) }),
            let colon = decoded.firstIndex(of: ":")
        {
            clientID = String(decoded[..<colon]).removingPercentEncoding
            secret = String(decoded[decoded.index(after: colon)...]).removingPercentEncoding
        }
        guard let clientID, let client = try await clients.authenticate(id: clientID, secret: secret) else {
            try await chargeNetwork(context)
            throw OAuthError("invalid_client", "The client's credentials are not right.", status: .unauthorized)
        }
        if !client.isPublic { try await chargeClient(client) }
        return client
    }

    /// One request of `client`'s budget (`openid.token_per_client`), spent before the request
    /// changes anything, so a 429 spends no code and rotates no token.
    func chargeClient(_ client: OpenIDClient) async throws {
        try await kernel.rateLimiter.consume(
            kernel.config.openID.tokenPerClient, key: "oidc.token:\(client.id)", message: "Too many token requests from this app. Wait before trying again.")
    }

    /// A request that proved nothing (a failed client authentication, a public client's invalid
    /// grant), charged to the sender's network (`openid.failures_per_ip`).
    func chargeNetwork(_ context: AuthRequestContext) async throws {
        try await kernel.rateLimiter.consume(
            kernel.config.openID.failuresPerIP, key: "oidc.token.failed:\(context.clientKey)",
            message: "Too many refused token requests from this network. Wait before trying again.")
    }

    /// `grant_type=authorization_code` of `POST /oauth/token`.
    func token(_ parameters: OAuthParameters, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let client = try await authenticatedClient(parameters, request, context)
        guard let code = parameters["code"] else { throw OAuthError("invalid_request", "The parameter `code` is required.") }
        if client.isPublic {
            // A public client's code is its proof: charged to the app once known to be its own and
            // live. A used one proves nothing, but goes on to be redeemed: its replay ends what it issued.
            switch try await codes.status(code, clientID: client.id) {
            case .live: try await chargeClient(client)
            case .used: try await chargeNetwork(context)
            case .unknown:
                try await chargeNetwork(context)
                throw OAuthError("invalid_grant", "The code is not valid or has expired.")
            }
        }
        let session = SecureRandom.uuid()
        let grant: AuthorizationCodes.Grant
        switch try await codes.redeem(code, session: session) {
        case .invalid:
            throw OAuthError("invalid_grant", "The code is not valid or has expired.")
        case .replayed(let used):
            // A code used twice: whoever holds it may not be the client; what it issued ends.
            if let sid = used.issuedSession.flatMap(UUID.init(uuidString:)), let uid = UUID(uuidString: used.userID) {
                try? await kernel.sessions.revoke(sid, of: uid)
            }
            kernel.logger.warning("an authorization code was used twice; its tokens were revoked", metadata: ["client.id": "\(client.id)"])
            throw OAuthError("invalid_grant", "The code was used already.")
        case .grant(let redeemed):
            grant = redeemed
        }
        guard grant.clientID == client.id, parameters["redirect_uri"] == grant.redirectURI else {
            throw OAuthError("invalid_grant", "The code was issued to another client or redirect URI.")
        }
        if let challenge = grant.codeChallenge {
            guard let verifier = parameters["code_verifier"], (43...128).contains(verifier.utf8.count),
                ConstantTime.equals(Array(Base64URL.encode(SHA256.hash(verifier)).utf8), Array(challenge.utf8))
            else { throw OAuthError("invalid_grant", "PKCE: the code_verifier does not match the challenge.") }
        } else if parameters["code_verifier"] != nil {
            throw OAuthError("invalid_grant", "PKCE: no challenge was sent with this code.")
        }
        // A code dies with the browser sign-in it came from: a reset, a password change, disabling or
        // deleting the account, or signing out ends that session before the code is redeemed.
        guard let userID = UUID(uuidString: grant.userID), let browser = UUID(uuidString: grant.sessionID),
            await kernel.sessions.isLive(browser, of: userID), let user = try await kernel.users.user(id: userID), user.disabledAt == nil
        else { throw OAuthError("invalid_grant", "The sign-in this code came from has ended.") }
        guard client.admits(user) else { throw OAuthError("invalid_grant", "The person may no longer use this app.") }
        let now = kernel.clock.now()
        // A refresh token only with offline_access; without one the session lives as long as the access token.
        let refreshToken = grant.scopes.contains("offline_access") ? RefreshToken.generate() : nil
        var record = SessionRecord(
            id: session, userID: userID, deviceName: client.name, platform: nil, amr: grant.amr, createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(refreshToken == nil ? OpenIDTokens.accessTTL : kernel.config.tokens.refreshTTL)),
            refreshHash: RefreshToken.hash(refreshToken ?? Base64URL.encode(SecureRandom.bytes(32))))
        record.kind = .client
        record.clientID = client.id
        record.clientGrant = ([String(grant.authTime), grant.sessionID] + grant.scopes).joined(separator: " ")
        let started = record
        try await kernel.sessions.startClientSession(started)
        return try tokenResponse(
            client: client, user: user, session: session, scopes: grant.scopes, authTime: grant.authTime, sid: grant.sessionID, amr: grant.amr,
            nonce: grant.nonce, refreshToken: refreshToken)
    }

    /// `grant_type=refresh_token` with client authentication: a client's refresh token rotates (reuse
    /// beyond the grace ends that grant only) and answers a new ID token, same `sub` and `auth_time`, no `nonce`.
    func refresh(_ parameters: OAuthParameters, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let client = try await authenticatedClient(parameters, request, context)
        guard let token = parameters["refresh_token"] else { throw OAuthError("invalid_request", "The parameter `refresh_token` is required.") }
        let session: SessionRecord, user: UserRecord, next: String
        do {
            // A public client's refresh token is its proof: charged once found to be a live one of its own.
            // The user is read in the rotation's own write: one removed from the app's groups, on any
            // instance, is refused here and the grant ends (contract §17).
            (session, user, next) = try await kernel.sessions.refreshClient(token, clientID: client.id, admitting: client.admits) {
                if client.isPublic { try await chargeClient(client) }
            }
        } catch let error as AuthError where error.status == .unauthorized {
            if client.isPublic { try await chargeNetwork(context) }
            throw OAuthError("invalid_grant", error.message)
        }
        let parts = (session.clientGrant ?? "").split(separator: " ").map(String.init)
        guard parts.count >= 2, let authTime = Int(parts[0]), user.disabledAt == nil else { throw OAuthError("invalid_grant", "The grant has ended.") }
        return try tokenResponse(
            client: client, user: user, session: session.id, scopes: Array(parts.dropFirst(2)), authTime: authTime, sid: parts[1], amr: session.amr,
            nonce: nil, refreshToken: next)
    }

    /// `POST /oauth/revoke` (RFC 7009): a client ends one of its refresh or access tokens, and with it
    /// the grant's session. 200 whatever the token was, as the RFC asks.
    func revoke(_ parameters: OAuthParameters, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let client = try await authenticatedClient(parameters, request, context)
        guard let token = parameters["token"] else { throw OAuthError("invalid_request", "The parameter `token` is required.") }
        var ending: (session: UUID, user: UUID)?
        if let claims = tokens.verifiedAccessToken(token), claims.clientID == client.id, let sessionID = UUID(uuidString: claims.sid),
            let userID = UUID(uuidString: claims.sub)
        {
            ending = (sessionID, userID)
        } else if let ended = try await kernel.sessions.clientSession(refreshToken: token, clientID: client.id) {
            ending = (ended.id, ended.userID)
        }
        // A public client's token is its proof: one that is not its own proved nothing.
        if client.isPublic { try await ending == nil ? chargeNetwork(context) : chargeClient(client) }
        if let ending { try? await kernel.sessions.revoke(ending.session, of: ending.user) }
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    func tokenResponse(
        client: OpenIDClient, user: UserRecord, session: UUID, scopes grantScopes: [String], authTime: Int, sid: String, amr: [String], nonce: String?,
        refreshToken: String?
    ) throws -> Response {
        let t = Int(kernel.clock.now().timeIntervalSince1970)
        let grant = (scopes: grantScopes, userID: user.id.lowercased, authTime: authTime, sessionID: sid, amr: amr, nonce: nonce)
        let scopes = Set(grant.scopes)
        let accessToken = try tokens.sign(
            [
                "iss": .string(issuer.value), "sub": .string(grant.userID), "aud": .string(client.id), "client_id": .string(client.id),
                "scope": .string(grant.scopes.joined(separator: " ")), "sid": .string(session.lowercased), "iat": .number(Double(t)),
                "exp": .number(Double(t + OpenIDTokens.accessTTL)), "jti": .string(Base64URL.encode(SecureRandom.bytes(16))),
                "auth_time": .number(Double(grant.authTime)),
            ], typ: "at+jwt", alg: client.idTokenAlg)
        var idClaims = OpenIDTokens.userClaims(user, scopes: scopes, client: client)
        idClaims["iss"] = .string(issuer.value)
        idClaims["aud"] = .string(client.id)
        idClaims["iat"] = .number(Double(t))
        idClaims["exp"] = .number(Double(t + OpenIDTokens.idTokenTTL))
        idClaims["auth_time"] = .number(Double(grant.authTime))
        idClaims["amr"] = .array(grant.amr.map { .string($0) })
        idClaims["sid"] = .string(grant.sessionID)
        if let nonce = grant.nonce { idClaims["nonce"] = .string(nonce) }
        // OpenID Connect Core §3.1.3.6: the left half of the access token's SHA-256 (RS256 tokens).
        if client.idTokenAlg == "RS256" { idClaims["at_hash"] = .string(Base64URL.encode(Array(SHA256.hash(accessToken).prefix(16)))) }
        let idToken = try tokens.sign(idClaims, typ: "JWT", alg: client.idTokenAlg)
        var answer: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string("Bearer"), "expires_in": .number(Double(OpenIDTokens.accessTTL)),
            "id_token": .string(idToken), "scope": .string(grant.scopes.joined(separator: " ")),
        ]
        if let refreshToken { answer["refresh_token"] = .string(refreshToken) }
        var w = JSONWriter(capacity: 1536)
        w.value(.object(answer))
        var response = w.response()
        response.headers[.cacheControl] = "no-store"
        return response
    }

    // MARK: - Grants

    /// The apps the user has allowed, with when each last used its tokens.
    func listGrants(_ principal: Principal) async throws -> Response {
        let sessions = try await kernel.sessions.sessions(of: principal.user.id).filter { $0.kind == .client }
        var rows: [JSONValue] = []
        for grant in try await consents.grants(of: principal.user.id) {
            let name = try await clients.find(grant.clientID)?.name ?? grant.clientID
            let lastUsed = sessions.filter { $0.clientID == grant.clientID }.map(\.lastUsedAt).max()
            rows.append(
                .object([
                    "client_id": .string(grant.clientID), "name": .string(name), "scopes": Self.list(grant.scopes), "created_at": .string(grant.createdAt),
                    "last_used_at": lastUsed.map { .string(Timestamp.string($0)) } ?? .null,
                ]))
        }
        var w = JSONWriter(capacity: 256)
        w.value(.object(["grants": .array(rows)]))
        return w.response()
    }

    /// Ends a consent and every token the app holds for the user.
    func endGrant(of user: UUID, client: String) async throws -> Bool {
        let forgot = try await consents.forget(user: user, client: client)
        let held = try await kernel.sessions.sessions(of: user).filter { $0.kind == .client && $0.clientID == client }
        for session in held { try await kernel.sessions.revoke(session.id, of: user) }
        return forgot || !held.isEmpty
    }

    // MARK: - Introspection

    /// RFC 7662's answer about a client access token this server signed: nil when `token` is not
    /// one (the caller then looks at authd's own tokens); `{"active":false}` when it has ended, or
    /// when `client` asks about another client's token.
    func introspectClientToken(_ token: String, askedBy client: String?) async throws -> [String: JSONValue]? {
        guard let claims = tokens.verifiedAccessToken(token) else {
            return client == nil || token.hasPrefix(SessionService.apiKeyPrefix) || OpenIDTokens.parts(token) == nil ? nil : ["active": .bool(false)]
        }
        guard client == nil || client == claims.clientID, let userID = UUID(uuidString: claims.sub), let sessionID = UUID(uuidString: claims.sid),
            await kernel.sessions.isLive(sessionID, of: userID), let client = try await clients.find(claims.clientID),
            let user = try await kernel.users.user(id: userID), user.disabledAt == nil, client.admits(user)
        else { return ["active": .bool(false)] }
        var answer: [String: JSONValue] = [
            "active": .bool(true), "token_type": .string("Bearer"), "sub": .string(claims.sub), "client_id": .string(claims.clientID),
            "aud": .string(claims.aud), "scope": .string(claims.scope), "sid": .string(claims.sid), "exp": .number(claims.exp), "iat": .number(claims.iat),
            "iss": .string(claims.iss),
        ]
        if let authTime = claims.authTime { answer["auth_time"] = .number(authTime) }
        return answer
    }

    // MARK: - Userinfo

    func userinfo(_ request: Request) async throws -> Response {
        func refused(_ error: String) -> Response {
            Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer error=\"\(error)\"", .cacheControl: "no-store"])
        }
        guard let header = request.headers[.authorization], let bearer = BearerAuthenticator.bearerToken(header),
            let claims = tokens.verifiedAccessToken(bearer),
            let userID = UUID(uuidString: claims.sub), let sessionID = UUID(uuidString: claims.sid)
        else { return refused("invalid_token") }
        // The session (ended by logout, reset, disable, a revoked grant) and the client (deleted) must both still be there.
        guard await kernel.sessions.isLive(sessionID, of: userID), let client = try await clients.find(claims.clientID),
            let user = try await kernel.users.user(id: userID), user.disabledAt == nil, client.admits(user)
        else { return refused("invalid_token") }
        var w = JSONWriter(capacity: 512)
        w.value(.object(OpenIDTokens.userClaims(user, scopes: Set(claims.scope.split(separator: " ").map(String.init)), client: client)))
        var response = w.response()
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
