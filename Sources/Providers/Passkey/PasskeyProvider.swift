public import AuthKernel
import Foundation
public import Hummingbird
import Logging

/// Passkeys (WebAuthn Level 3; contract §10): registration from a fresh session, sign-in with a
/// passkey alone (user verification counts as the second factor: `amr` `["passkey","mfa"]`), and a
/// passkey as the second factor after another sign-in. ES256 and EdDSA, attestation `none` or
/// `packed` self attestation, discoverable credentials with user verification required.
///
/// - `POST /api/v1/auth/passkeys/register/options`, `POST /api/v1/auth/passkeys/register` (fresh session)
/// - `GET /api/v1/auth/passkeys`, `DELETE /api/v1/auth/passkeys/{id}` (fresh session)
/// - `POST /api/v1/auth/passkeys/login/options`, `POST /api/v1/auth/passkeys/login`
/// - `GET /.well-known/apple-app-site-association` with `passkeys.apple_app_ids`
public struct PasskeyProvider: AuthProvider {
    /// `passkey`: its name in `providers`, `auth_providers` and `amr`.
    public static let id = "passkey"
    /// Its sentences: English and German.
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
    /// Its configuration section, `passkeys`.
    public static let configSection = "passkeys"
    /// How the notice of a newly added sign-in method names it.
    public static let methodName = "a passkey"
    /// Started only when listed: it needs `passkeys.rp_id`.
    public static let startsByDefault = false

    let kernel: Kernel
    let settings: PasskeySettings
    let verifier: WebAuthnVerifier
    let challenges: PasskeyChallenges

    /// Reads the `passkeys` section and registers the passkey as a second factor.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        self.settings = try PasskeySettings(&config)
        self.verifier = WebAuthnVerifier(rpID: settings.rpID, origins: settings.origins)
        self.challenges = PasskeyChallenges(codes: kernel.codes)
        if !settings.fits(issuer: kernel.issuer) {
            let problem = "passkeys.rp_id \"\(settings.rpID)\" is neither the host of the issuer \(kernel.issuer) nor a domain it is under: passkeys made for it cannot be used on authd's own pages"
            kernel.configurationProblems.report(problem)
            kernel.logger.warning("\(problem)")
        }
        kernel.signInHooks.register(Factor(provider: self))
        kernel.signInHooks.register(Policy())
        // "Not you?" on the notice of a new passkey takes that passkey (its identity's subject names it).
        kernel.users.removals.register(kind: Self.id) { user, subject in
            let all = PasskeyRecord.all(user).filter { record in
                Base64URL.decode(record.id).map { PasskeyRecord.subject(credentialID: $0) } != subject
            }
            try? user.setSecret(PasskeyRecord.key, all.isEmpty ? nil : all)
        }
    }

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)

        routes.post("passkeys/register/options") { request, context -> Response in
            try await creationOptions(for: try context.requirePrincipal()).response(from: request, context: context)
        }

        routes.post("passkeys/register") { request, context -> Response in
            let principal = try context.requirePrincipal()
            try kernel.sessions.requireFresh(principal)
            let body = try await request.decodeJSON(as: RegisterBody.self, context: context)
            let record = try await register(body.credential, name: try Self.validName(body.name), principal: principal)
            var response = try Listed(id: record.id, name: record.name, createdAt: Timestamp.string(Date(timeIntervalSince1970: record.createdAt)), lastUsedAt: nil, backedUp: record.backedUp)
                .response(from: request, context: context)
            response.status = .created
            return response
        }

        routes.get("passkeys") { request, context -> Response in
            let principal = try context.requirePrincipal()
            let user = try await kernel.users.user(id: principal.user.id) ?? principal.user
            return try ListAnswer(passkeys: PasskeyRecord.all(user).map(Self.listed)).response(from: request, context: context)
        }

        routes.delete("passkeys/:id") { _, context -> Response in
            let principal = try context.requirePrincipal()
            try kernel.sessions.requireFresh(principal)
            _ = try await remove(context.parameters.get("id") ?? "", from: principal.user.id, device: principal.session.deviceName)
            return Response(status: .noContent)
        }

        routes.post("passkeys/login/options") { request, context -> Response in
            try await loginOptions(context).response(from: request, context: context)
        }

        routes.post("passkeys/login") { request, context -> SignInResponse in
            try await kernel.rateLimiter.consume(settings.loginPerIP, key: "passkey.login.ip:\(context.clientKey)")
            let body = try await request.decodeJSON(as: LoginBody.self, context: context)
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            let user: UserRecord
            do {
                user = try await verifiedAssertion(body.credential, purpose: .login, key: nil, expectedUser: nil)
            } catch let error as WebAuthnError {
                kernel.logger.info("passkey sign-in refused", metadata: ["reason": "\(error)"])
                await kernel.audit.record("sign_in_failed", provider: Self.id, device: device.name, reason: "INVALID_CREDENTIALS")
                throw AuthError.invalidCredentials
            }
            // User verification made it two factors at once: no policy asks for another.
            // The user as read before the check: a reset that ended every session meanwhile refuses this one.
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: device, multiFactor: true)
        }
        return routes
    }

    /// A discoverable sign-in's options (rate-limited per network).
    func loginOptions(_ context: AuthRequestContext) async throws -> RequestOptions {
        try await kernel.rateLimiter.consume(settings.loginPerIP, key: "passkey.options.ip:\(context.clientKey)")
        return RequestOptions(challenge: try await challenges.issue(.login), rpId: settings.rpID, allowCredentials: [])
    }

    /// A new passkey's options for a fresh session's user (its challenge bound to the session).
    func creationOptions(for principal: Principal) async throws -> CreationOptions {
        try kernel.sessions.requireFresh(principal)
        let user = principal.user
        let challenge = try await challenges.issue(.register, key: principal.session.id.lowercased)
        let name = user.email ?? user.username ?? user.id.lowercased
        return CreationOptions(
            rp: .init(id: settings.rpID, name: settings.rpName),
            user: .init(id: Self.userHandle(user.id), name: name, displayName: user.displayName ?? name),
            challenge: challenge, excludeCredentials: PasskeyRecord.all(user).map { Descriptor(id: $0.id) })
    }

    /// Checks a new passkey against its session's challenge and adds it to the account (audited,
    /// the owner told).
    func register(_ credential: RegistrationCredential, name: String?, principal: Principal) async throws -> PasskeyRecord {
        try kernel.sessions.requireFresh(principal)
        let registration: WebAuthnVerifier.Registration
        do {
            guard credential.type == "public-key", let clientData = Base64URL.decode(credential.response.clientDataJSON),
                let attestation = Base64URL.decode(credential.response.attestationObject),
                let rawID = Base64URL.decode(credential.rawId ?? credential.id), Base64URL.decode(credential.id) == rawID
            else { throw WebAuthnError("the credential is not a RegistrationResponseJSON with base64url fields") }
            registration = try verifier.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, rawID: rawID)
            try await challenges.consume(registration.clientData.challenge, .register, key: principal.session.id.lowercased)
        } catch let error as WebAuthnError {
            kernel.logger.info("passkey registration refused", metadata: ["user.id": "\(principal.user.id.lowercased)", "reason": "\(error)"])
            throw AuthError.invalidRequest("The passkey did not verify: \(error.description).", field: "credential")
                .worded("passkey.error.not_verified", ["reason": error.description])
        }
        let record = PasskeyRecord(
            id: Base64URL.encode(registration.credentialID), algorithm: registration.publicKey.algorithm.rawValue,
            publicKey: Base64URL.encode(registration.publicKey.key), signCount: registration.signCount,
            name: name ?? "Passkey", createdAt: kernel.clock.now().timeIntervalSince1970, lastUsedAt: nil,
            backupEligible: registration.flags.contains(.backupEligible), backedUp: registration.flags.contains(.backedUp))
        let identity = Identity(provider: Self.id, subject: PasskeyRecord.subject(credentialID: registration.credentialID))
        if let owner = try await kernel.users.user(identity: identity), owner.id != principal.user.id { throw AuthError.identityInUse }
        let maxPerUser = settings.maxPerUser
        try await kernel.users.change(principal.user.id) { user in
            var all = PasskeyRecord.all(user)
            guard !all.contains(where: { $0.id == record.id }) else { throw AuthError.identityInUse }
            guard all.count < maxPerUser else {
                throw AuthError.invalidState("This account has \(maxPerUser) passkeys, the most it may have: remove one first.")
                    .worded("passkey.error.too_many", ["max": String(maxPerUser)])
            }
            all.append(record)
            try user.setSecret(PasskeyRecord.key, all)
            user.identities.append(identity)
        }
        kernel.logger.info("passkey registered", metadata: ["user.id": "\(principal.user.id.lowercased)"])
        await kernel.audit.record("passkey_added", provider: Self.id, user: principal.user.id, device: principal.session.deviceName)
        // The owner's notice goes out with the new identity (UserService mails it).
        await kernel.events.credentialChanged(principal.user.id, credential: Self.id)
        return record
    }

    /// `/.well-known/apple-app-site-association`, when `passkeys.apple_app_ids` lists apps.
    public func rootRoutes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        guard !settings.appleAppIDs.isEmpty else { return routes }
        let association = AppSiteAssociation(webcredentials: .init(apps: settings.appleAppIDs))
        routes.get(".well-known/apple-app-site-association") { request, context in try association.response(from: request, context: context) }
        return routes
    }

    /// Checks an assertion and records its use: the user it signs in (or, as a second factor, for
    /// `expectedUser`), with the sign counter and last use updated in one write.
    func verifiedAssertion(_ credential: AuthenticationCredential, purpose: PasskeyChallenges.Purpose, key: String?, expectedUser: UUID?) async throws -> UserRecord {
        guard credential.type == "public-key", let rawID = Base64URL.decode(credential.rawId ?? credential.id), Base64URL.decode(credential.id) == rawID,
            rawID.count <= AuthenticatorData.maxCredentialIDLength,
            let clientData = Base64URL.decode(credential.response.clientDataJSON), let authData = Base64URL.decode(credential.response.authenticatorData),
            let signature = Base64URL.decode(credential.response.signature)
        else { throw WebAuthnError("the credential is not an AuthenticationResponseJSON with base64url fields") }
        let identity = Identity(provider: Self.id, subject: PasskeyRecord.subject(credentialID: rawID))
        guard let user = try await kernel.users.user(identity: identity), expectedUser == nil || user.id == expectedUser,
            let stored = PasskeyRecord.all(user).first(where: { $0.id == Base64URL.encode(rawID) }), let coseKey = stored.coseKey
        else { throw WebAuthnError("no account has this passkey") }
        // A discoverable sign-in names its user (WebAuthn §7.2 step 6): the handle must be there and be this account's.
        let handle = credential.response.userHandle ?? ""
        if expectedUser == nil || !handle.isEmpty {
            guard handle == Self.userHandle(user.id) else { throw WebAuthnError("the user handle is missing or another account's") }
        }
        let assertion = try verifier.verifyAssertion(
            clientDataJSON: clientData, authenticatorData: authData, signature: signature, key: coseKey, storedSignCount: stored.signCount)
        // Backup eligibility is fixed when a credential is made (WebAuthn §6.1.3): a change means another credential source.
        guard assertion.flags.contains(.backupEligible) == stored.backupEligible else { throw WebAuthnError("the backup-eligible flag changed") }
        try await challenges.consume(assertion.clientData.challenge, purpose, key: key)
        let now = kernel.clock.now().timeIntervalSince1970
        let id = stored.id
        // The counter moves only forward, also when two assertions race.
        try await kernel.users.change(user.id) { user in
            var all = PasskeyRecord.all(user)
            guard let i = all.firstIndex(where: { $0.id == id }) else { throw WebAuthnError("the passkey was removed meanwhile") }
            if all[i].signCount != 0 || assertion.signCount != 0 {
                guard assertion.signCount > all[i].signCount else { throw WebAuthnError("the sign counter did not move on") }
            }
            all[i].signCount = assertion.signCount
            all[i].lastUsedAt = now
            all[i].backedUp = assertion.flags.contains(.backedUp)
            try user.setSecret(PasskeyRecord.key, all)
        }
        return user
    }

    /// The WebAuthn user handle: the user id's 16 bytes, base64url (random, and no personal data).
    static func userHandle(_ id: UUID) -> String {
        Base64URL.encode(withUnsafeBytes(of: id.uuid) { Array($0) })
    }

    /// The name given, as the kernel cleans every label (the `Label` schema): blank means none.
    /// Removes the passkey `id` (base64url) from `userID`'s account, with its identity; audited and
    /// announced as a credential change. The user as it is after.
    /// - Throws: 404 when the account has no such passkey.
    func remove(_ id: String, from userID: UUID, device: String?, by reason: String? = nil) async throws -> UserRecord {
        let updated = try await kernel.users.change(userID) { user -> UserRecord? in
            var all = PasskeyRecord.all(user)
            guard let found = all.firstIndex(where: { $0.id == id }), let raw = Base64URL.decode(all[found].id) else { return nil }
            all.remove(at: found)
            try user.setSecret(PasskeyRecord.key, all.isEmpty ? nil : all)
            let subject = PasskeyRecord.subject(credentialID: raw)
            user.identities.removeAll { $0.provider == Self.id && $0.subject == subject }
            return user
        }
        guard let updated else { throw AuthError.notFound("This account has no passkey with that id.").worded("passkey.error.no_such") }
        kernel.logger.info("passkey removed", metadata: ["user.id": "\(userID.lowercased)"])
        await kernel.audit.record("passkey_removed", provider: Self.id, user: userID, device: device, reason: reason)
        await kernel.events.credentialChanged(userID, credential: Self.id)
        return updated
    }

    /// Renames the passkey `id` of `userID`'s account.
    /// - Throws: 404 when the account has no such passkey.
    func rename(_ id: String, of userID: UUID, to name: String) async throws {
        let renamed = try await kernel.users.change(userID) { user -> Bool in
            var all = PasskeyRecord.all(user)
            guard let found = all.firstIndex(where: { $0.id == id }) else { return false }
            all[found].name = name
            try user.setSecret(PasskeyRecord.key, all)
            return true
        }
        guard renamed else { throw AuthError.notFound("This account has no passkey with that id.").worded("passkey.error.no_such") }
    }

    static func validName(_ name: String?) throws -> String? {
        try ShortLabel.clean(name, field: "name", maxLength: PasskeyRecord.maxNameLength)
    }

    static func listed(_ record: PasskeyRecord) -> Listed {
        Listed(
            id: record.id, name: record.name, createdAt: Timestamp.string(Date(timeIntervalSince1970: record.createdAt)),
            lastUsedAt: record.lastUsedAt.map { Timestamp.string(Date(timeIntervalSince1970: $0)) }, backedUp: record.backedUp)
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension PasskeyProvider: RedactedDescription {}
