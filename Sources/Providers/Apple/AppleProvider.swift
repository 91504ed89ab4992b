public import AuthKernel
import Foundation
import JWTKit
public import Hummingbird
import Logging
public import ServiceLifecycle

/// Sign in with Apple (contract §4 "apple"): verifies the identity token an iOS app got from
/// AuthenticationServices, finds or creates the user, links with a Bearer token, and — when the
/// app's key is configured — exchanges the authorization code so that deleting the account can
/// revoke the user's Apple tokens.
public struct AppleProvider: AuthProvider {
    /// `apple`: its name in `providers`, its configuration section, `auth_providers` and `amr`.
    public static let id = "apple"
    /// How the notice of a newly added sign-in method names it.
    public static let methodName = "Sign in with Apple"
    /// Needs `apple.audiences`: started only when listed in `providers`.
    public static let startsByDefault = false
    static let revokeJob = "apple.revoke"

    let kernel: Kernel
    let settings: AppleSettings
    let keySet: AppleKeySet
    let verifier: AppleTokenVerifier
    let tokenClient: AppleTokenClient?
    let box: SecretBox

    /// Reads its configuration section and registers its mail and hooks with the kernel.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        settings = try AppleSettings(&config)
        keySet = AppleKeySet(
            remote: RemoteKeySet(
                name: "Apple", url: settings.jwksURL, refetchInterval: settings.jwksRefetchInterval, http: kernel.http, clock: kernel.clock,
                logger: kernel.logger, validate: { json in try await JWTKeyCollection().add(jwksJSON: json) }))
        verifier = AppleTokenVerifier(keySet: keySet, settings: settings)
        box = try SecretBox(key: try kernel.secret(named: "apple-secretbox"))
        if let revocation = settings.revocation {
            let secret: AppleClientSecret
            do { secret = try AppleClientSecret(revocation) } catch {
                throw ConfigError("apple.private_key_path does not hold an EC P-256 (.p8) private key")
            }
            let client = AppleTokenClient(settings: revocation, secret: secret, clock: kernel.clock, http: kernel.http)
            tokenClient = client
            let box = self.box, logger = kernel.logger
            kernel.jobs.register(kind: Self.revokeJob) { job in
                guard case .string(let sealed) = job.payload["refresh_token"], let token = box.open(sealed) else {
                    logger.error("an Apple revocation job holds no readable token; dropping it")
                    return
                }
                try await client.revoke(refreshToken: token)
                logger.info("revoked the Apple tokens of a deleted account")
            }
            kernel.accountDeletion.register { user in
                guard case .object(let apple) = user.secrets[Self.id], case .string(let sealed) = apple["refresh_token"] else { return }
                do {
                    try await kernel.jobs.enqueue(kind: Self.revokeJob, payload: ["refresh_token": .string(sealed)])
                    await kernel.jobs.runDue()  // try at once; the runner retries failures later
                } catch {
                    logger.error("could not queue the Apple revocation", metadata: ["user.id": "\(user.id.lowercased)", "error": "\(error)"])
                }
            }
        } else {
            tokenClient = nil
        }
    }

    /// Its background work, run beside the server.
    public var services: [any Service] { [keySet.remote.refresher] }

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("apple") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: AppleSignInBody.self, context: context)
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            // Apple's codes are a few hundred characters and a nonce is what the app chose: bounded
            // before either is sent on, hashed or logged.
            if let code = body.authorizationCode, code.unicodeScalars.count > 1024 {
                throw AuthError.invalidRequest("The field `authorization_code` must be at most 1024 characters.", field: "authorization_code")
            }
            if let nonce = body.nonce, nonce.unicodeScalars.count > 256 {
                throw AuthError.invalidRequest("The field `nonce` must be at most 256 characters.", field: "nonce")
            }
            try await kernel.rateLimiter.consume(settings.attemptsPerIP, key: "apple.ip:\(context.clientKey)")
            let claims: AppleIdentityClaims
            do {
                claims = try await verifier.verify(body.identityToken, nonce: body.nonce, now: kernel.clock.now())
            } catch {
                kernel.logger.info("Apple identity token refused", metadata: ["reason": "\(error)", "request.ip": "\(context.clientIP)"])
                await kernel.audit.record("sign_in_failed", provider: Self.id, device: device.name, reason: AuthError.invalidAppleToken.code)
                throw AuthError.invalidAppleToken
            }
            // Checked before the sign-in: refused afterwards, it left a new user behind a 400.
            let name = try DisplayName.validate(body.fullName?.displayName)
            let email = claims.email.flatMap(EmailAddress.init)?.value
            var user = try await kernel.users.signIn(
                .init(identity: Identity(provider: Self.id, subject: claims.sub), email: email, emailVerified: email != nil && claims.emailVerified == true),
                linkingTo: context.principal
            )
            if user.displayName == nil, let name {
                user = try await kernel.users.update(user.id) { if $0.displayName == nil { $0.displayName = name } }
            }
            if let code = body.authorizationCode, let tokenClient {
                user = await storeRefreshToken(code: code, client: tokenClient, user: user)
            }
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: device, requireUnchangedCredentials: false)
        }
        return routes
    }

    /// Exchanges the authorization code and keeps Apple's refresh token, encrypted. Failures are
    /// logged and do not stop the sign-in.
    func storeRefreshToken(code: String, client: AppleTokenClient, user: UserRecord) async -> UserRecord {
        do {
            guard let token = try await client.exchange(code: code) else { return user }
            let sealed = box.seal(token)
            return try await kernel.users.update(user.id) { $0.secrets[Self.id] = .object(["refresh_token": .string(sealed)]) }
        } catch {
            kernel.logger.warning("could not exchange the Apple authorization code", metadata: ["user.id": "\(user.id.lowercased)", "error": "\(error)"])
            return user
        }
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension AppleProvider: RedactedDescription {}
