public import AuthStorage
public import Foundation
package import Logging
import Metrics

/// Sessions and their tokens: sign-in, refresh rotation with reuse detection, authentication of
/// Bearer tokens against live sessions, listing and revocation.
public struct SessionService: Sendable {
    let store: any AuthStore
    let issuer: AccessTokenIssuer
    let verifier: AccessTokenVerifier
    let settings: AuthConfig.TokenSettings
    let rateLimiter: RateLimiter
    let clock: any AuthClock
    let logger: Logger
    let verified = VerifiedTokenCache()
    let audit: AuditLog?
    /// Seconds after its sign-in during which a session may change credentials (`auth.fresh_auth`).
    package let freshAuth: Int
    /// The policies and second factors every sign-in passes through.
    package let hooks: SignInHooks
    /// Who is told when sessions end.
    package let events: AccountEvents
    /// The groups a registered app lets in (nil: no such app, or everyone), for the sessions a device
    /// sign-in naming it started: their refresh obeys the app's groups (contract §17).
    package var appGroups: @Sendable (_ clientID: String) async throws -> [String]? = { _ in nil }
    /// Seals the network a session signed in from: its owner reads it on `/account`, and no
    /// address is kept at rest in clear. Without one, nothing is kept.
    package var networkBox: SecretBox?

    /// The sealed network of the request being handled, for a new session.
    func sealedNetwork() -> String? {
        guard let networkBox, let info = RequestInfo.current else { return nil }
        return networkBox.seal(ClientNetwork.network(for: info.clientIP))
    }

    /// The network `session` signed in from, as its owner's page shows it.
    package func network(of session: SessionRecord) -> String? {
        session.network.flatMap { networkBox?.open($0) }
    }

    /// Creates the service.
    package init(
        store: any AuthStore, issuer: AccessTokenIssuer, verifier: AccessTokenVerifier, settings: AuthConfig.TokenSettings,
        rateLimiter: RateLimiter, clock: any AuthClock, logger: Logger, audit: AuditLog? = nil, freshAuth: Int = 600,
        hooks: SignInHooks = SignInHooks(), events: AccountEvents = AccountEvents()
    ) {
        self.hooks = hooks
        self.events = events
        self.audit = audit
        self.freshAuth = freshAuth
        self.store = store
        self.issuer = issuer
        self.verifier = verifier
        self.settings = settings
        self.rateLimiter = rateLimiter
        self.clock = clock
        self.logger = logger
    }

    /// Signs `user` in: runs the registered ``SignInPolicy``s, then starts a session, or answers the
    /// 202 challenge when a policy demands a second factor. A provider's sign-in route returns the
    /// result as it is.
    ///
    /// `user` is the record as read before the credential was checked: if every session of the user
    /// was ended for a credential change since (a password reset racing this sign-in), the sign-in
    /// is refused with 401 `INVALID_CREDENTIALS`, in the same write that would have started it.
    /// - Parameters:
    ///   - user: who signs in, as your provider found or created them.
    ///   - amr: the factor used, e.g. `["email"]` (the provider's id).
    ///   - device: the labels the client sent.
    ///   - requireUnchangedCredentials: false for a sign-in that checked nothing stored on the user
    ///     (an emailed code, an Apple token), which a reset does not make wrong.
    ///   - multiFactor: true when the one check was two factors at once (a passkey with user
    ///     verification): no policy's demand for a second factor applies, and `amr` gets `mfa`.
    ///     Only this says so; an `mfa` a provider puts in `amr` itself is dropped.
    /// - Throws: 403 `ACCOUNT_DISABLED`; what a policy refuses with; 403 `FORBIDDEN` when a policy
    ///   demands a second factor the user has none of.
    public func signIn(
        _ user: UserRecord, amr: [String], device: DeviceInfo, requireUnchangedCredentials: Bool = true, multiFactor: Bool = false
    ) async throws -> SignInResponse {
        try await signIn(user, amr: amr, device: device, requireUnchangedCredentials: requireUnchangedCredentials, multiFactor: multiFactor, kind: nil)
    }

    /// ``signIn(_:amr:device:requireUnchangedCredentials:multiFactor:)`` for a sign-in another of
    /// the user's sessions vouched for (an approval from a signed-in device): a session started at
    /// once carries `authTime`, the vouching session's `auth_time`, instead of now. A second factor
    /// asked and answered makes it an interactive sign-in of its own, at the answer's time.
    public func signIn(
        _ user: UserRecord, amr: [String], device: DeviceInfo, multiFactor: Bool = false, vouchedAt authTime: Date
    ) async throws -> SignInResponse {
        try await signIn(user, amr: amr, device: device, requireUnchangedCredentials: true, multiFactor: multiFactor, kind: nil, authTime: authTime)
    }

    /// ``signIn(_:amr:device:requireUnchangedCredentials:multiFactor:)`` for a session of `kind`
    /// (`browser` for authd's own pages).
    package func signIn(
        _ user: UserRecord, amr: [String], device: DeviceInfo, requireUnchangedCredentials: Bool = true, multiFactor: Bool = false,
        kind: SessionRecord.Kind?, authTime: Date? = nil
    ) async throws -> SignInResponse {
        let amr = amr.filter { $0 != "mfa" } + (multiFactor ? ["mfa"] : [])
        guard !hooks.policies.isEmpty else {
            return .session(
                try await startSession(user, amr: amr, device: device, requireUnchangedCredentials: requireUnchangedCredentials, kind: kind, authTime: authTime))
        }
        let offered = try await secondFactorsDemanded(of: user, amr: amr, device: device, multiFactor: multiFactor)
        guard !offered.isEmpty else {
            return .session(
                try await startSession(user, amr: amr, device: device, requireUnchangedCredentials: requireUnchangedCredentials, kind: kind, authTime: authTime))
        }
        return .secondFactorRequired(
            try await startChallenge(user, amr: amr, device: device, factors: offered, requireUnchangedCredentials: requireUnchangedCredentials))
    }

    /// Runs the sign-in policies for `user` (as stored now): the second factors they demand that the
    /// user can answer, in policy order; empty when none is demanded.
    /// - Throws: 403 `ACCOUNT_DISABLED`; what a policy refuses with; 403 `FORBIDDEN` when a policy
    ///   demands a second factor the user has none of.
    package func secondFactorsDemanded(of user: UserRecord, amr: [String], device: DeviceInfo, multiFactor: Bool = false) async throws -> [String] {
        let current = try await store.read([.user(user.id)]) { $0.user(id: user.id) } ?? user
        guard current.disabledAt == nil else { throw AuthError.accountDisabled }
        let attempt = SignInAttempt(user: current, amr: amr, device: device, clientIP: RequestInfo.current?.clientIP)
        var demanded: [String] = []
        for policy in hooks.policies {
            switch try await policy.decide(attempt) {
            case .allow: continue
            case .refuse(let error):
                await audit?.record("sign_in_refused", provider: amr.first, user: user.id, device: device.name, reason: error.code)
                throw error
            case .requireSecondFactor(let factors):
                guard !multiFactor else { continue }
                demanded += factors.filter { !demanded.contains($0) }
            }
        }
        guard !demanded.isEmpty else { return [] }
        var offered: [String] = []
        for name in demanded where try await hooks.factor(named: name)?.isOffered(to: current) == true { offered.append(name) }
        guard !offered.isEmpty else { throw AuthError.noSecondFactor }
        return offered
    }

    /// Starts a session for `user` at once, without the sign-in policies: for what has passed them
    /// (a completed challenge) and for tests.
    /// `clientID`: the app a device sign-in named; the session's refreshes obey its groups.
    package func startSession(
        _ user: UserRecord, amr: [String], device: DeviceInfo, requireUnchangedCredentials: Bool = true, kind: SessionRecord.Kind? = nil,
        authTime: Date? = nil, clientID: String? = nil
    ) async throws -> SessionResponse {
        let now = clock.now()
        let token = RefreshToken.generate()
        var started = SessionRecord(
            userID: user.id, deviceName: device.name, platform: device.platform, amr: amr, createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(settings.refreshTTL)), refreshHash: RefreshToken.hash(token)
        )
        started.kind = kind
        started.authTime = authTime.map { min($0, now) }
        started.clientID = clientID
        started.network = sealedNetwork()
        let session = started
        let current = try await store.write([.user(user.id)]) { state -> UserRecord in
            // The user may have been deleted while the caller was deciding to sign it in.
            guard let current = state.user(id: user.id) else { throw AuthError.unauthorized }
            guard current.disabledAt == nil else { throw AuthError.accountDisabled }
            guard !requireUnchangedCredentials || current.credentialVersion == user.credentialVersion else { throw AuthError.invalidCredentials }
            state.put(session)
            return current
        }
        logger.info("signed in", metadata: ["user.id": "\(user.id.lowercased)", "session.id": "\(session.id.lowercased)", "amr": "\(amr.joined(separator: ","))"])
        await audit?.record("sign_in", provider: amr.first, user: user.id, device: device.name)
        if events.hasEventHooks { await events.emit("session.created", AccountEvents.data(session)) }
        return try response(user: current, session: session, refreshToken: token, now: now)
    }

    /// Exchanges a refresh token for a new pair (rotation; see ``RefreshTokenRotation``).
    /// - Throws: 401 `INVALID_REFRESH_TOKEN`, 401 `REFRESH_TOKEN_REUSED` (the session is ended), 429 per session.
    package func refresh(_ token: String) async throws -> SessionResponse {
        // An API key's hash sits in the same index; a key is exchanged, never rotated. A browser's
        // cookie is never turned into tokens, and a client's refresh token needs its client.
        let (session, user, newToken, now) = try await rotate(token) { !$0.isAPIKey && !$0.isBrowser && $0.kind != .client }
        return try response(user: user, session: session, refreshToken: newToken, now: now)
    }

    /// Rotates an OpenID client's refresh token (kind `client`, issued to `clientID`), with the
    /// same reuse detection as every refresh token.
    /// - Returns: the session as rotated, its user and the new refresh token.
    /// `charge` runs once the token is found to be a live one of the client's, before it rotates:
    /// what it throws (a 429) leaves the token as it was.
    /// A user `admitting` refuses (no longer in the app's groups), read in the rotation's write, ends
    /// the session: 401 as for an ended one.
    package func refreshClient(
        _ token: String, clientID: String, admitting: @escaping @Sendable (UserRecord) -> Bool = { _ in true },
        charge: @Sendable () async throws -> Void = {}
    ) async throws -> (SessionRecord, UserRecord, String) {
        let (session, user, newToken, _) = try await rotate(token, charge: charge, admitting: admitting) { $0.kind == .client && $0.clientID == clientID }
        return (session, user, newToken)
    }

    private func rotate(
        _ token: String, charge: @Sendable () async throws -> Void = {}, admitting: @escaping @Sendable (UserRecord) -> Bool = { _ in true },
        accept: @escaping @Sendable (SessionRecord) -> Bool
    ) async throws -> (SessionRecord, UserRecord, String, Date) {
        guard token.utf8.count <= 256 else { throw AuthError.invalidRefreshToken }
        let presented = RefreshToken.hash(token)
        // Only what a session never changes is read here; the rotation's write reads the rest.
        let found = try await store.read([.sessionToRotate(refreshHash: presented)]) { state in
            state.session(refreshHash: presented).flatMap { accept($0) ? ($0.id, $0.userID, $0.kind == .client ? nil : $0.clientID) : nil }
        }
        guard let (sessionID, userID, deviceApp) = found else { throw AuthError.invalidRefreshToken }
        // A device sign-in's session for a registered app limited to groups: its member only.
        var admits = admitting
        if let deviceApp, let groups = try await appGroups(deviceApp), !groups.isEmpty {
            admits = { user in admitting(user) && groups.contains(where: user.groups.contains) }
        }
        let admitted = admits
        try await rateLimiter.consume(settings.refreshRate, key: "refresh:\(sessionID)", message: "Too many refreshes for this session. Wait before trying again.")
        try await charge()
        let newToken = RefreshToken.generate()
        let now = clock.now()
        let (outcome, user, ended) = try await store.write([.session(sessionID), .user(userID)]) {
            state -> (RefreshTokenRotation.Outcome, UserRecord?, SessionRecord?) in
            guard let session = state.session(id: sessionID), session.userID == userID else { return (.unknown, nil, nil) }
            if let user = state.user(id: userID), !admitted(user) {
                state.deleteSession(id: session.id)
                return (.unknown, user, session)
            }
            let outcome = RefreshTokenRotation.rotate(
                session, presented: presented, newHash: RefreshToken.hash(newToken), now: now,
                grace: settings.refreshReuseGrace, ttl: settings.refreshTTL
            )
            switch outcome {
            case .rotated(let next):
                state.put(next)
                return (outcome, state.user(id: session.userID), nil)
            case .reused, .expired:
                state.deleteSession(id: session.id)
                return (outcome, state.user(id: session.userID), session)
            case .unknown:
                return (outcome, state.user(id: session.userID), nil)
            }
        }
        if let ended { await events.sessionsEnded([ended]) }
        switch outcome {
        case .rotated(let session):
            guard let user else { throw AuthError.invalidRefreshToken }
            return (session, user, newToken, now)
        case .reused:
            logger.warning("refresh token reuse detected; session revoked", metadata: ["session.id": "\(sessionID.lowercased)", "user.id": "\(user?.id.lowercased ?? "-")"])
            await audit?.record("refresh_reuse", user: user?.id)
            Self.reuseDetections.increment()
            throw AuthError.refreshTokenReused
        case .expired, .unknown:
            throw AuthError.invalidRefreshToken
        }
    }

    /// `authd_refresh_token_reuse_total`: sessions ended because a rotated refresh token came back.
    static let reuseDetections = Counter(label: "authd_refresh_token_reuse_total")

    /// Verifies a Bearer token and finds its live session and user.
    /// - Throws: 401 `UNAUTHORIZED` for any bad token or ended session (the reason is logged at debug).
    package func authenticate(bearer token: String) async throws(AuthError) -> Principal {
        let now = clock.now()
        let entry: VerifiedTokenCache.Entry
        if let cached = verified.entry(for: token, now: now, skew: verifier.clockSkew) {
            entry = cached
        } else {
            let claims: AccessTokenClaims
            do {
                claims = try verifier.verify(token, now: now)
            } catch {
                logger.debug("access token rejected", metadata: ["reason": "\(error)"])
                throw AuthError.unauthorized
            }
            guard let sid = UUID(text: claims.sid), let uid = UUID(text: claims.sub) else { throw AuthError.unauthorized }
            entry = .init(claims: claims, userID: uid, sessionID: sid)
            verified.insert(token, entry: entry, now: now)
        }
        let claims = entry.claims, sid = entry.sessionID, uid = entry.userID
        let found: (SessionRecord, UserRecord)?
        do {
            found = try await store.read([.session(sid), .user(uid)]) { state -> (SessionRecord, UserRecord)? in
                guard let session = state.session(id: sid), session.userID == uid, session.expiresAt > now,
                    let user = state.user(id: uid)
                else { return nil }
                return (session, user)
            }
        } catch {
            logger.error("session lookup failed", metadata: ["error": "\(error)"])
            throw AuthError.unavailable
        }
        guard let (session, user) = found else {
            logger.debug("access token of an ended session", metadata: ["session.id": "\(sid.lowercased)"])
            throw AuthError.unauthorized
        }
        return Principal(user: user, session: session, claims: claims)
    }

    /// The session of `clientID`'s tokens this refresh token (current or retired) belongs to.
    package func clientSession(refreshToken token: String, clientID: String) async throws -> SessionRecord? {
        guard token.utf8.count <= 256 else { return nil }
        let presented = RefreshToken.hash(token)
        return try await store.read([.sessionByRefreshHash(presented)]) { state in
            state.session(refreshHash: presented).flatMap { $0.kind == .client && $0.clientID == clientID ? $0 : nil }
        }
    }

    /// Stores the session of an OpenID client's tokens (kind `client`), while its user exists and is enabled.
    package func startClientSession(_ session: SessionRecord) async throws {
        try await store.write([.user(session.userID)]) { state in
            guard let user = state.user(id: session.userID), user.disabledAt == nil else { throw AuthError.unauthorized }
            state.put(session)
        }
        if events.hasEventHooks { await events.emit("session.created", AccountEvents.data(session)) }
    }

    /// The user and browser session a `__Host-` cookie holds the secret of, while the session lives
    /// and the account is enabled; nil otherwise.
    package func browserPrincipal(cookie secret: String) async throws -> Principal? {
        guard !secret.isEmpty, secret.utf8.count <= 256 else { return nil }
        let presented = RefreshToken.hash(secret), now = clock.now()
        // The session first, then its user: a database backend loads only the rows a read names.
        guard let (sessionID, userID) = try await store.read([.sessionByRefreshHash(presented)], { state -> (UUID, UUID)? in
            guard let session = state.session(refreshHash: presented), session.isBrowser, session.expiresAt > now else { return nil }
            return (session.id, session.userID)
        }) else { return nil }
        let found = try await store.read([.session(sessionID), .user(userID)]) { state -> (SessionRecord, UserRecord)? in
            guard let session = state.session(id: sessionID), session.expiresAt > now, let user = state.user(id: userID), user.disabledAt == nil
            else { return nil }
            return (session, user)
        }
        guard let (session, user) = found else { return nil }
        let claims = AccessTokenClaims(
            iss: verifier.issuer, aud: verifier.audience, sub: user.id.lowercased, sid: session.id.lowercased, iat: Int(session.createdAt.timeIntervalSince1970),
            exp: Int(session.expiresAt.timeIntervalSince1970), jti: session.id.lowercased, amr: session.amr, isAnonymous: user.isAnonymous,
            authTime: Int(session.signedInAt.timeIntervalSince1970))
        return Principal(user: user, session: session, claims: claims)
    }

    /// Whether the session still exists and has not expired (false when it cannot be checked).
    package func isLive(_ sessionID: UUID, of userID: UUID) async -> Bool {
        let now = clock.now()
        return (try? await store.read([.session(sessionID)]) { state in
            guard let session = state.session(id: sessionID) else { return false }
            return session.userID == userID && session.expiresAt > now
        }) ?? false
    }

    /// The live sessions of a user, oldest first.
    public func sessions(of userID: UUID) async throws -> [SessionRecord] {
        let now = clock.now()
        return try await store.read([.sessionsOfUser(userID)]) { $0.sessions(userID: userID).filter { $0.expiresAt > now } }
    }

    /// Ends one session of a user.
    /// - Throws: 404 `NOT_FOUND` when the user has no such session.
    public func revoke(_ sessionID: UUID, of userID: UUID) async throws {
        let now = clock.now()
        let ended = try await store.write([.session(sessionID)]) { state -> SessionRecord in
            guard let session = state.session(id: sessionID), session.userID == userID else {
                throw AuthError.notFound("No such session.")
            }
            Self.end(session, in: &state, now: now)
            return session
        }
        await events.sessionsEnded([ended])
        logger.info("session ended", metadata: ["user.id": "\(userID.lowercased)", "session.id": "\(sessionID.lowercased)"])
    }

    /// Ends the session a refresh token (current or retired) belongs to, for a client whose access
    /// token has expired (contract §5); returns its user, nil for a token that matches nothing. An
    /// API key is not ended this way: it is revoked by its id.
    package func logout(refreshToken token: String) async throws -> UUID? {
        guard token.utf8.count <= 256 else { return nil }
        let presented = RefreshToken.hash(token)
        let now = clock.now()
        let ended = try await store.write([.sessionByRefreshHash(presented)]) { state -> SessionRecord? in
            guard let session = state.session(refreshHash: presented), !session.isAPIKey else { return nil }
            Self.end(session, in: &state, now: now)
            return session
        }
        guard let ended else { return nil }
        await events.sessionsEnded([ended])
        logger.info("session ended", metadata: ["user.id": "\(ended.userID.lowercased)", "session.id": "\(ended.id.lowercased)"])
        return ended.userID
    }

    /// Ends every session of a user except `keep` (e.g. after a password change), and moves the
    /// user's `UserRecord/credentialVersion` on, so no sign-in that checked the old credential
    /// can start a session afterwards.
    public func revokeAll(of userID: UUID, except keep: UUID? = nil) async throws {
        let now = clock.now()
        // The user first, then its sessions: the order account deletion locks them in.
        let ended = try await store.write([.user(userID), .sessionsOfUser(userID)]) { state -> [SessionRecord] in
            let ended = state.sessions(userID: userID).filter { $0.id != keep }
            for session in ended { Self.end(session, in: &state, now: now) }
            if var user = state.user(id: userID) {
                user.credentialVersion += 1
                user.updatedAt = now
                state.put(user)
            }
            return ended
        }
        await events.sessionsEnded(ended)
    }

    /// Deletes sessions past their expiry: their refresh tokens stopped working, but until now they
    /// stayed in memory and in every snapshot until presented. Those of anonymous users without any
    /// identity stay until ``UserService/purgeAnonymous(idleFor:)`` takes them with their user.
    /// - Returns: how many were deleted.
    @discardableResult
    package func purgeExpired() async throws -> Int {
        let now = clock.now()
        let deleted = try await StorePurge.run(store) { part in
            try await store.write([.sessionsExpired(before: now)]) { state -> Int in
                var expired: [SessionRecord] = []
                state.sessions.forEachValue(inShards: part) { session in
                    guard session.expiresAt <= now else { return }
                    if let user = state.user(id: session.userID), user.isAnonymous, user.identities.isEmpty { return }
                    expired.append(session)
                }
                for session in expired { Self.end(session, in: &state, now: now, reason: "expired") }
                return expired.count
            }
        }
        if deleted > 0 { logger.info("expired sessions purged", metadata: ["sessions": "\(deleted)"]) }
        return deleted
    }

    /// Whether the principal's session began with an interactive sign-in at most `auth.fresh_auth`
    /// seconds ago, as adding or changing a credential needs.
    public func isFresh(_ principal: Principal) -> Bool {
        FreshSession.isFresh(principal, now: clock.now(), within: freshAuth)
    }

    /// Throws 403 `REAUTH_REQUIRED` unless the session is fresh (``isFresh(_:)``). A user with no
    /// credential at all (anonymous, nothing linked) cannot sign in again, and is let through.
    public func requireFresh(_ principal: Principal) throws(AuthError) {
        try FreshSession.require(principal, now: clock.now(), within: freshAuth)
    }

    /// Throws unless `principal` may approve something that lets another device in (contract §12): a
    /// full session that is fresh, or one that shows its own refresh token — the current one, or its
    /// predecessor within `tokens.refresh_reuse_grace`. The token is checked against its hash and not
    /// rotated; an older one is reuse and ends the session. A leaked access token alone so never
    /// makes a new way in.
    /// - Throws: 403 `FORBIDDEN` for a limited session, 403 `REAUTH_REQUIRED` without the proof,
    ///   401 `REFRESH_TOKEN_REUSED` (the session is ended).
    public func requireApprovalProof(_ principal: Principal, refreshToken: String?) async throws {
        if principal.session.isLimited { throw AuthError.forbidden }
        if isFresh(principal) { return }
        guard let refreshToken, refreshToken.utf8.count <= 256 else { throw AuthError.reauthRequired }
        let presented = RefreshToken.hash(refreshToken)
        let sessionID = principal.session.id, userID = principal.user.id, grace = TimeInterval(settings.refreshReuseGrace)
        let now = clock.now()
        let ended = try await store.write([.session(sessionID)]) { state -> SessionRecord? in
            guard let session = state.session(id: sessionID), session.userID == userID, session.expiresAt > now else {
                throw AuthError.reauthRequired
            }
            // Hashes of 256-bit tokens: comparing them says nothing about a token.
            if session.refreshHashes.contains(presented) { return nil }
            guard let retired = session.retired.first(where: { $0.hash == presented }) else { throw AuthError.reauthRequired }
            if now.timeIntervalSince(retired.retiredAt) <= grace { return nil }
            Self.end(session, in: &state, now: now, reason: "refresh_reuse")
            return session
        }
        guard let ended else { return }
        await events.sessionsEnded([ended])
        logger.warning("refresh token reuse detected on an approval; session revoked", metadata: ["session.id": "\(sessionID.lowercased)", "user.id": "\(userID.lowercased)"])
        await audit?.record("refresh_reuse", user: userID)
        Self.reuseDetections.increment()
        throw AuthError.refreshTokenReused
    }

    /// What the sign-in policies add to a token of `session`.
    private func extraClaims(for user: UserRecord, session: SessionRecord) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [:]
        let policies = hooks.policies
        if !policies.isEmpty {
            for policy in policies { claims.merge(policy.claims(for: user, session: session)) { _, new in new } }
            claims = claims.filter { !AccessTokenClaims.reservedNames.contains($0.key) }
        }
        // Contract §8: app_metadata rides in every token when set, so a resource server reads it offline.
        if !user.appMetadata.isEmpty { claims["app_metadata"] = .object(user.appMetadata) }
        if !settings.claims.isEmpty {
            if settings.claims.contains("email"), let email = user.email { claims["email"] = .string(email) }
            if settings.claims.contains("email_verified"), user.email != nil { claims["email_verified"] = .bool(user.emailVerified) }
        }
        return claims
    }

    private func response(user: UserRecord, session: SessionRecord, refreshToken: String, now: Date) throws -> SessionResponse {
        SessionResponse(
            accessToken: try accessToken(user: user, session: session, now: now, ttl: settings.accessTTL), refreshToken: refreshToken,
            expiresIn: settings.accessTTL, user: UserResponse(user)
        )
    }

    /// A signed access token of `session`, `ttl` seconds long.
    func accessToken(user: UserRecord, session: SessionRecord, now: Date, ttl: Int) throws -> String {
        let iat = Int(now.timeIntervalSince1970)
        let claims = AccessTokenClaims(
            iss: verifier.issuer, aud: verifier.audience, sub: user.id.lowercased,
            sid: session.id.lowercased, iat: iat, exp: iat + ttl,
            jti: Base64URL.encode(SecureRandom.bytes(16)), amr: session.amr, isAnonymous: user.isAnonymous,
            authTime: Int(session.signedInAt.timeIntervalSince1970), extra: extraClaims(for: user, session: session)
        )
        return try issuer.sign(claims)
    }
}
