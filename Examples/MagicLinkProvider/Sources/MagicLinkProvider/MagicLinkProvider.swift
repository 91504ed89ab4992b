public import AuthKernel
public import Hummingbird

/// Sign-in by a link mailed to an address: `POST /api/v1/auth/magic-link/send` mails a single-use
/// link, and the app the link opens posts its token to `POST /api/v1/auth/magic-link/redeem`, which
/// signs in (creating the account at the first sign-in, with the address verified).
///
/// The same mail carries a code, for a person reading it on another device than the one signing
/// in (a TV, a shared computer): `POST /api/v1/auth/magic-link/verify-code` takes it. Whichever is
/// used first ends the other.
///
/// The link carries one of the kernel's single-use tokens (``SingleUseTokens``): only a hash of it
/// is stored, it works once, and a new link cancels the ones mailed before. The link's page is the
/// app's (a universal link), never a GET that signs in: mail scanners open every link they see.
///
/// ```json
/// "providers": ["magic-link"],
/// "magic-link": { "ttl": 900, "link": "https://app.example.com/magic" }
/// ```
public struct MagicLinkProvider: AuthProvider {
    /// `magic-link`: its name in `providers`, its section, `auth_providers` and `amr`.
    public static let id = "magic-link"
    /// How the notice of a newly added sign-in method names it.
    public static let methodName = "a link mailed to you"
    /// It needs the app's link page: runs only when `providers` lists it.
    public static let startsByDefault = false

    static let purpose = "magic-link.sign-in"
    static let codePurpose = "magic-link.code"
    static let template = "magic-link.link"

    /// What `authd check` lists and docs/configuration.md shows; the only keys `init` may read.
    public static let settings = [
        Setting("ttl", .seconds, default: "900", "How long a mailed link works."),
        Setting("link", .string, default: "ISSUER/magic", "The page the link opens: the app's universal link."),
        Setting.rateLimit("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600), "Links mailed per client network."),
        Setting.rateLimit("sends_per_email", default: RateLimitRule(limit: 1, window: 60), "Links mailed to one address."),
        Setting.rateLimit("verifies_per_ip", default: RateLimitRule(limit: 30, window: 600), "Codes tried per client network."),
    ]

    /// Each link mailed is audited (the address, never the link).
    public static let auditEvents = [AuditEventDeclaration("magic_link_sent", "A sign-in link was mailed.")]

    /// The link's mail, registered before `init` runs.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            template, "The sign-in link and code (`{{link}}`, `{{code}}`, `{{lifetime}}`).",
            MailTemplate(
                subject: "Your {{product_name}} sign-in link (code {{code}})",
                text: "Open this link on the device you are signing in on:\n\n{{link}}\n\nOr type this code there: {{code}}\n\nEither works once and expires in {{lifetime}}. If you did not ask for it, ignore this email.",
                html: #"<p>Open this link on the device you are signing in on:</p><p><a href="{{link}}">{{link}}</a></p><p>Or type this code there: <strong>{{code}}</strong></p><p>Either works once and expires in {{lifetime}}. If you did not ask for it, ignore this email.</p>"#))
    ]

    let kernel: Kernel
    let ttl: Int
    let link: String
    let sendsPerIP: RateLimitRule
    let sendsPerEmail: RateLimitRule
    let verifiesPerIP: RateLimitRule
    /// The code mailed with the link: six digits, five tries, as long as the link.
    let codes: CodePolicy

    /// Reads its declared settings.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        ttl = try config.seconds("ttl", default: 900, max: 86_400)
        link = try config.string("link", default: kernel.issuer + "/magic")
        sendsPerIP = try config.rule("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600))
        sendsPerEmail = try config.rule("sends_per_email", default: RateLimitRule(limit: 1, window: 60))
        verifiesPerIP = try config.rule("verifies_per_ip", default: RateLimitRule(limit: 30, window: 600))
        codes = CodePolicy(ttl: ttl, resendInterval: 0, maxAttempts: 5, maxFailures: 10, failureWindow: 3600)
    }

    struct Send: Decodable { var email: String }
    struct Redeem: Decodable {
        var token: String
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case token, deviceName = "device_name", platform }
    }
    struct VerifyCode: Decodable {
        var email: String
        var code: String
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case email, code, deviceName = "device_name", platform }
    }
    struct Sent: ResponseEncodable {
        var message: String
        var expiresIn: Int
        enum CodingKeys: String, CodingKey { case message, expiresIn = "expires_in" }
    }

    /// `send`, `redeem` and `verify-code`, under `/api/v1/auth/magic-link`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("magic-link/send") { request, context -> Sent in
            let body = try await request.decodeJSON(as: Send.self, context: context)
            guard let email = EmailAddress(body.email) else { throw AuthError.invalidEmail }
            // Both or neither: a second ask for one address inside the minute spends nothing of the network's.
            try await kernel.rateLimiter.consume([
                RateLimitCharge(sendsPerIP, key: "magic-link.ip:\(context.clientKey)"),
                RateLimitCharge(sendsPerEmail, key: "magic-link.email:\(email.value)"),
            ])
            // A new link cancels the old ones: only the newest mail signs in (a new code replaces the old too).
            try await kernel.tokens.revokeAll(purpose: Self.purpose, subject: email.value)
            let token = try await kernel.tokens.issue(purpose: Self.purpose, subject: email.value, ttl: ttl)
            let code = try await kernel.codes.issue(purpose: Self.codePurpose, key: email.value, policy: codes)
            try await kernel.mailer.send(
                template: Self.template, to: email.value,
                values: ["link": link + "?token=" + token, "lifetime": MailTemplate.lifetime(ttl)], code: code)
            await kernel.audit.record("magic_link_sent", provider: Self.id, account: email.value)
            return Sent(message: "Sign-in link sent", expiresIn: ttl)
        }
        routes.post("magic-link/redeem") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: Redeem.self, context: context)
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            guard let redeemed = try await kernel.tokens.redeem(purpose: Self.purpose, token: body.token) else {
                await kernel.audit.record("sign_in_failed", provider: Self.id, device: device.name, reason: AuthError.invalidMagicLink.code)
                throw AuthError.invalidMagicLink
            }
            // The link was used: the code mailed with it ends too.
            try await kernel.codes.revoke(purpose: Self.codePurpose, key: redeemed.subject)
            return try await signIn(redeemed.subject, device: device, context)
        }
        routes.post("magic-link/verify-code") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: VerifyCode.self, context: context)
            guard let email = EmailAddress(body.email) else { throw AuthError.invalidEmail }
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            try await kernel.rateLimiter.consume(verifiesPerIP, key: "magic-link.verify.ip:\(context.clientKey)")
            do {
                try await kernel.codes.verify(purpose: Self.codePurpose, key: email.value, code: body.code, policy: codes)
            } catch let error as AuthError {
                // Wrong, used, expired or dead (its attempts_remaining says which); a 429 is not an attempt.
                if case .invalidCode = error {
                    await kernel.audit.record("sign_in_failed", provider: Self.id, account: email.value, device: device.name, reason: error.code)
                }
                throw error
            }
            // The code was used: the link mailed with it ends too.
            try await kernel.tokens.revokeAll(purpose: Self.purpose, subject: email.value)
            return try await signIn(email.value, device: device, context)
        }
        return routes
    }

    /// The mailbox answered: the address is verified. With a Bearer, the identity links to the caller.
    func signIn(_ email: String, device: DeviceInfo, _ context: AuthRequestContext) async throws -> SignInResponse {
        let user = try await kernel.users.signIn(
            .init(identity: Identity(provider: Self.id, subject: email), email: email, emailVerified: true), linkingTo: context.principal)
        // The kernel audits the sign-in and runs the sign-in policies (a second factor, say).
        return try await kernel.sessions.signIn(user, amr: [Self.id], device: device)
    }
}

extension AuthError {
    /// 401 `INVALID_MAGIC_LINK`: the link is wrong, used, expired or was replaced by a newer one.
    public static let invalidMagicLink = AuthError(
        status: .unauthorized, code: "INVALID_MAGIC_LINK", message: "This sign-in link is used, expired or replaced by a newer one. Ask for a new link.")
}
