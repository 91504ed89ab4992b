public import AuthKernel
import Foundation
public import Hummingbird
import Logging
public import ServiceLifecycle

/// Sign in with another OpenID Provider (contract §16): Google, Microsoft, GitLab, another authd.
/// A native app sends the ID token the provider's SDK gave it; authd checks it against the
/// provider's published keys and signs its own user in.
///
/// - `POST /api/v1/auth/oidc/{name}` with `id_token` and `nonce` → the session response.
///
/// Accounts: the identity is `(name, subject)`. With a Bearer it links to the caller (a fresh
/// session). Otherwise it signs in its own user; only an upstream marked `trust_email` gives that
/// user its verified email, or joins an existing account whose email is verified — never a
/// console operator's.
public struct OIDCProvider: AuthProvider {
    /// `oidc`: its name in `providers`, its configuration section and `amr`.
    public static let id = "oidc"
    /// Its sentences: English and German.
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
    /// How the notice of a newly added sign-in method names it.
    public static let methodName = "sign-in with another identity provider"
    /// Needs `oidc.providers`: started only when listed.
    public static let startsByDefault = false
    /// The purpose its used ID tokens are kept under.
    static let usedPurpose = "oidc.id_token"
    /// The ids of authd's own providers and sign-in methods, which no upstream may be named.
    static let reservedNames: Set<String> = [
        "email", "password", "apple", "anonymous", "pin", "passkey", "totp", "recovery_code", "approval", "oidc", "api_key", "email_code", "device",
        "service", "admin",
    ]

    let kernel: Kernel
    let settings: OIDCSettings
    let verifiers: [String: OIDCTokenVerifier]

    /// Reads its configuration section; the identity providers' documents are fetched in the background.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        settings = try OIDCSettings(&config)
        var verifiers: [String: OIDCTokenVerifier] = [:]
        for (name, upstream) in settings.upstreams {
            // An identity is (name, subject): a name another provider keys its identities by would
            // let the upstream's subjects stand for that provider's (an `email` upstream's `sub`
            // naming someone's address).
            if Self.reservedNames.contains(name) || kernel.providerIDs.contains(name) {
                throw ConfigError("oidc.providers: the name \"\(name)\" is a provider's id; choose another")
            }
            // GitHub has no ID tokens and no discovery: only the web flow signs in with it.
            guard upstream.kind != .github else { continue }
            verifiers[name] = OIDCTokenVerifier(
                upstream: upstream, discovery: OIDCDiscovery(upstream: upstream, kernel: kernel), clockSkew: settings.clockSkew)
        }
        self.verifiers = verifiers
    }

    /// Fetches every upstream's document once at start-up (a failure is logged; that upstream answers 503 until it works).
    public var services: [any Service] { [DiscoveryWarmUp(verifiers: Array(verifiers.values))] }

    struct Body: Decodable {
        var idToken: String
        var nonce: String?
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case idToken = "id_token", nonce, deviceName = "device_name", platform }
    }

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("oidc/{name}") { request, context -> SignInResponse in
            let name = try context.parameters.require("name")
            guard let verifier = verifiers[name] else { throw AuthError.notFound("No identity provider of that name.") }
            let body = try await request.decodeJSON(as: Body.self, context: context)
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            if let nonce = body.nonce, nonce.unicodeScalars.count > 256 {
                throw AuthError.invalidRequest("The field `nonce` must be at most 256 characters.", field: "nonce")
            }
            try await kernel.rateLimiter.consume(settings.attemptsPerIP, key: "oidc.ip:\(context.clientKey)")
            let identity = try await verified(body.idToken, by: verifier, nonce: body.nonce, device: device.name, context: context)
            let user = try await account(for: identity, upstream: verifier.upstream, principal: context.principal)
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: device, requireUnchangedCredentials: false)
        }
        return routes
    }

    /// The token's identity, or 401 `INVALID_ID_TOKEN` (the reason logged and audited) when it is
    /// not valid here or was used before; 503 while the upstream cannot be reached.
    func verified(_ token: String, by verifier: OIDCTokenVerifier, nonce: String?, web: Bool = false, device: String?, context: AuthRequestContext)
        async throws -> OIDCTokenVerifier.Identity
    {
        let name = verifier.upstream.name
        let identity: OIDCTokenVerifier.Identity
        do {
            identity = try await verifier.verify(token, nonce: nonce, now: kernel.clock.now(), web: web)
        } catch let error as AuthError {
            throw error  // the upstream cannot be reached: 503 for it alone
        } catch {
            kernel.logger.info("identity provider's token refused", metadata: ["oidc.provider": "\(name)", "reason": "\(error)", "request.ip": "\(context.clientIP)"])
            await kernel.audit.record("sign_in_failed", provider: Self.id, device: device, reason: AuthError.invalidIDToken.code)
            throw AuthError.invalidIDToken
        }
        // Accepted once: a token seen before (stolen from a log, replayed) signs nobody in.
        guard try await kernel.tokens.firstUse(purpose: Self.usedPurpose, value: token, until: identity.expiresAt) else {
            kernel.logger.info("identity provider's token used twice", metadata: ["oidc.provider": "\(name)"])
            await kernel.audit.record("sign_in_failed", provider: Self.id, device: device, reason: "ID_TOKEN_REPLAYED")
            throw AuthError.invalidIDToken
        }
        return identity
    }

    /// The account an upstream identity signs in (or links to the caller), by contract §16's rules.
    func account(for identity: OIDCTokenVerifier.Identity, upstream: OIDCUpstream, principal: Principal?) async throws -> UserRecord {
        var email: String?
        // Only a trusted upstream's verified address counts, and never to join an operator's account.
        if upstream.trustEmail, identity.emailVerified, let address = identity.email.flatMap(EmailAddress.init)?.value {
            email = address
            if principal == nil, let holder = try await kernel.users.user(email: address), holder.emailVerified,
                try await kernel.protectedAccounts.contains(holder.id)
            {
                kernel.logger.info("a trusted email names a protected account; signing in without it", metadata: ["user.id": "\(holder.id.lowercased)"])
                email = nil
            }
        }
        var user = try await kernel.users.signIn(
            .init(identity: Identity(provider: upstream.name, subject: identity.subject), email: email, emailVerified: email != nil),
            linkingTo: principal)
        if user.displayName == nil, let name = try? DisplayName.validate(identity.name) {
            user = try await kernel.users.update(user.id) { if $0.displayName == nil { $0.displayName = name } }
        }
        return user
    }
}

/// Fetches each upstream's discovery document at start-up, off the start's path.
struct DiscoveryWarmUp: Service {
    let verifiers: [OIDCTokenVerifier]
    func run() async throws {
        for verifier in verifiers { _ = try? await verifier.discovery.current() }
        try? await gracefulShutdown()
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension OIDCProvider: RedactedDescription {}
