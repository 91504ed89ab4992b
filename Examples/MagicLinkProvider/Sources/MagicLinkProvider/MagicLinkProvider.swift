public import AuthKernel
public import Hummingbird

/// Sign-in by a link mailed to an address: `POST /api/v1/auth/magic-link/send` mails a single-use
/// link, and the app the link opens posts its token to `POST /api/v1/auth/magic-link/redeem`, which
/// signs in (creating the account at the first sign-in, with the address verified).
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
    public static let id = "magic-link"
    public static let methodName = "a link mailed to you"
    public static let startsByDefault = false

    static let purpose = "magic-link.sign-in"
    static let template = "magic-link.link"

    /// What `authd check` lists and docs/configuration.md shows; the only keys `init` may read.
    public static let settings = [
        Setting("ttl", .seconds, default: "900", "How long a mailed link works."),
        Setting("link", .string, default: "ISSUER/magic", "The page the link opens: the app's universal link."),
        Setting.rateLimit("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600), "Links mailed per client network."),
        Setting.rateLimit("sends_per_email", default: RateLimitRule(limit: 1, window: 60), "Links mailed to one address."),
    ]

    /// Each link mailed is audited (the address, never the link).
    public static let auditEvents = [AuditEventDeclaration("magic_link_sent", "A sign-in link was mailed.")]

    /// The link's mail, registered before `init` runs.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            template, "The sign-in link (`{{link}}`, `{{lifetime}}`).",
            MailTemplate(
                subject: "Your {{product_name}} sign-in link",
                text: "Open this link on the device you are signing in on:\n\n{{link}}\n\nIt works once and expires in {{lifetime}}. If you did not ask for it, ignore this email.",
                html: #"<p>Open this link on the device you are signing in on:</p><p><a href="{{link}}">{{link}}</a></p><p>It works once and expires in {{lifetime}}. If you did not ask for it, ignore this email.</p>"#))
    ]

    let kernel: Kernel
    let ttl: Int
    let link: String
    let sendsPerIP: RateLimitRule
    let sendsPerEmail: RateLimitRule

    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        ttl = try config.seconds("ttl", default: 900, max: 86_400)
        link = try config.string("link", default: kernel.issuer + "/magic")
        sendsPerIP = try config.rule("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600))
        sendsPerEmail = try config.rule("sends_per_email", default: RateLimitRule(limit: 1, window: 60))
    }

    struct Send: Decodable { var email: String }
    struct Redeem: Decodable {
        var token: String
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case token, deviceName = "device_name", platform }
    }
    struct Sent: ResponseEncodable {
        var message: String
        var expiresIn: Int
        enum CodingKeys: String, CodingKey { case message, expiresIn = "expires_in" }
    }

    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("magic-link/send") { request, context -> Sent in
            let body = try await request.decodeJSON(as: Send.self, context: context)
            guard let email = EmailAddress(body.email) else { throw AuthError.invalidEmail }
            try await kernel.rateLimiter.consume(sendsPerIP, key: "magic-link.ip:\(context.clientKey)")
            try await kernel.rateLimiter.consume(sendsPerEmail, key: "magic-link.email:\(email.value)")
            // A new link cancels the old ones: only the newest mail signs in.
            try await kernel.tokens.revokeAll(purpose: Self.purpose, subject: email.value)
            let token = try await kernel.tokens.issue(purpose: Self.purpose, subject: email.value, ttl: ttl)
            try await kernel.mailer.send(
                template: Self.template, to: email.value,
                values: ["link": link + "?token=" + token, "lifetime": MailTemplate.lifetime(ttl)])
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
            // The mailbox answered: the address is verified. With a Bearer, the identity links to the caller.
            let user = try await kernel.users.signIn(
                .init(identity: Identity(provider: Self.id, subject: redeemed.subject), email: redeemed.subject, emailVerified: true),
                linkingTo: context.principal)
            // The kernel audits the sign-in and runs the sign-in policies (a second factor, say).
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: device)
        }
        return routes
    }
}

extension AuthError {
    /// 401 `INVALID_MAGIC_LINK`: the link is wrong, used, expired or was replaced by a newer one.
    public static let invalidMagicLink = AuthError(
        status: .unauthorized, code: "INVALID_MAGIC_LINK", message: "This sign-in link is used, expired or replaced by a newer one. Ask for a new link.")
}
