public import AuthKernel
public import Hummingbird
import Logging

/// Sign-in with a one-time code sent by email (contract §4 "email").
///
/// - `POST /api/v1/auth/email/send-code` and `resend-code` with `email`: mail a 6-digit code.
/// - `POST /api/v1/auth/email/verify` with `email`, `code`: sign in, creating the user on first sign-in.
///   With a Bearer token, the email identity is linked to the caller instead.
public struct EmailProvider: AuthProvider {
    /// `email`: its name in `providers`, its configuration section, `auth_providers` and `amr`.
    public static let id = "email"
    /// Its sentences: English and German.
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
    /// How the notice of a newly added sign-in method names it, in English; the catalog's
    /// `email.method_name` words it in other languages.
    public static let methodName = "sign-in with a code mailed to this address"
    /// Code purpose in the store.
    static let purpose = "email_sign_in"

    let kernel: Kernel
    let settings: EmailSettings

    /// Reads its configuration section and registers its mail and hooks with the kernel.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        self.settings = try EmailSettings(&config)
    }

    struct EmailBody: Decodable { var email: String }
    struct VerifyBody: Decodable {
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

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("email/send-code") { request, context in
            try await sendCode(request, context, message: "Verification code sent")
        }
        routes.post("email/resend-code") { request, context in
            try await sendCode(request, context, message: "Verification code resent")
        }
        routes.post("email/verify") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: VerifyBody.self, context: context)
            guard let email = EmailAddress(body.email) else { throw AuthError.invalidEmail }
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            let user = try await verifiedUser(email, code: body.code, device: device, context)
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: device, requireUnchangedCredentials: false)
        }
        return routes
    }

    /// The user the mailed `code` proves `email` is, made at the first sign-in; with a Bearer, the
    /// identity links to the caller. Wrong codes are audited.
    func verifiedUser(_ email: EmailAddress, code: String, device: DeviceInfo, _ context: AuthRequestContext) async throws -> UserRecord {
        // A request refused by the per-IP limit is not an attempt worth an audit line (each is an
        // fsync, and a flood of them would rotate real events out).
        try await kernel.rateLimiter.consume([
            RateLimitCharge(settings.verifiesPerIP, key: "email.verify.ip:\(context.clientKey)"),
            RateLimitCharge(settings.attemptsPerClient, key: "email.verify.client:\(context.clientKey):\(email.value)"),
        ])
        do {
            try await kernel.codes.verify(purpose: Self.purpose, key: email.value, code: code, policy: settings.codes)
        } catch let error as AuthError {
            await kernel.audit.record("sign_in_failed", provider: Self.id, account: email.value, device: device.name, reason: error.code)
            throw error
        }
        return try await kernel.users.signIn(
            .init(identity: Identity(provider: Self.id, subject: email.value), email: email.value, emailVerified: true),
            linkingTo: context.principal
        )
    }

    private func sendCode(_ request: Request, _ context: AuthRequestContext, message: String) async throws -> Sent {
        let body = try await request.decodeJSON(as: EmailBody.self, context: context)
        guard let email = EmailAddress(body.email) else { throw AuthError.invalidEmail }
        try await sendCode(to: email, context)
        return Sent(message: message, expiresIn: settings.codes.ttl)
    }

    /// Mails a sign-in code to `email`, within the limits per network and the address's resend interval.
    func sendCode(to email: EmailAddress, _ context: AuthRequestContext) async throws {
        try await kernel.rateLimiter.consume(settings.sendsPerIP, key: "email.send.ip:\(context.clientKey)")
        // The interval is the address's, not its code record's: a sign-in uses the record up, and a
        // resend right after it must still wait (contract §12).
        if settings.codes.resendInterval > 0 {
            try await kernel.rateLimiter.consume(
                RateLimitRule(limit: 1, window: settings.codes.resendInterval), key: "email.send:\(email.value)",
                message: "A code was sent a moment ago. Wait before asking for another.")
        }
        let code = try await kernel.codes.issue(purpose: Self.purpose, key: email.value, policy: settings.codes)
        // A closed sign-up answers as an open one (contract §17): the same write, answer and one
        // mail, which tells an unknown address it has no account instead of carrying the code.
        if try await kernel.signup.refusesSignUp(email: email.value, linkingTo: context.principal) {
            try await kernel.signup.mailNoAccount(to: email.value)
        } else {
            try await kernel.mailer.send(
                template: EmailMail.signInCode, to: email.value, code: code, lifetime: settings.codes.ttl
            )
        }
        kernel.logger.info("sign-in code sent", metadata: ["request.ip": "\(context.clientIP)"])
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension EmailProvider: RedactedDescription {}
