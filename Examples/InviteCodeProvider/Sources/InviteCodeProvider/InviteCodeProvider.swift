public import AuthKernel
public import Hummingbird

/// Sign-in with a personal invite code: `POST /api/v1/auth/invite/redeem`.
///
/// Each code in the configuration is one person's key to one account: the first redeem creates
/// the account, every later one signs into it again. Only a hash of each code is kept in memory
/// and in the store (the identity's subject), and codes are compared in constant time.
///
/// ```json
/// "providers": ["invite"],
/// "invite": { "codes": ["7d2f-93ac-41b8-e0c6"], "attempts_per_ip": { "limit": 10, "window": 60 } }
/// ```
public struct InviteCodeProvider: AuthProvider {
    public static let id = "invite"
    public static let methodName = "an invite code"
    /// Nothing to offer without codes: runs only when `providers` lists it.
    public static let startsByDefault = false

    /// Codes shorter than this are refused at start-up: a code is a password no one chose.
    public static let minimumCodeLength = 12

    /// The `invite` section's keys: what `authd check` lists, and the only ones `init` may read.
    public static let settings = [
        Setting("codes", .strings, default: "none (required)", secret: true, "The invite codes, 12 to 128 characters each; each is one person's account."),
        Setting.rateLimit("attempts_per_ip", default: RateLimitRule(limit: 10, window: 60), "Redeem attempts per client network."),
    ]

    let kernel: Kernel
    let digests: [[UInt8]]
    let attemptsPerIP: RateLimitRule

    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        let codes = try config.strings("codes", default: [])
        guard !codes.isEmpty else { throw ConfigError("invite.codes must list at least one invite code") }
        guard codes.allSatisfy({ $0.count >= Self.minimumCodeLength && $0.count <= 128 }) else {
            throw ConfigError("invite.codes must be \(Self.minimumCodeLength) to 128 characters each")
        }
        digests = codes.map { SHA256.hash($0) }
        attemptsPerIP = try config.rule("attempts_per_ip", default: RateLimitRule(limit: 10, window: 60))
    }

    struct Redeem: Decodable {
        var code: String
        var displayName: String?
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case code, displayName = "display_name", deviceName = "device_name", platform }
    }

    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("invite/redeem") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: Redeem.self, context: context)
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            let user = try await redeemedUser(code: body.code, displayName: body.displayName, device: device, context)
            // The kernel audits the sign-in (and counts it in authd_sign_ins_total) when it starts the
            // session; its sign-in hooks run here too: a policy may still refuse or ask for a second factor.
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: device)
        }
        return routes
    }

    /// The account `code` opens, made at its first use; the same for the API and the sign-in page.
    func redeemedUser(code: String, displayName: String?, device: DeviceInfo, _ context: AuthRequestContext) async throws -> UserRecord {
        // Bound what an attacker sends before it is hashed, stored or logged.
        guard (1...128).contains(code.utf8.count) else {
            throw AuthError.invalidRequest("The field `code` must be 1 to 128 bytes.", field: "code")
        }
        let displayName = try DisplayName.validate(displayName)
        try await kernel.rateLimiter.consume(attemptsPerIP, key: "invite.ip:\(context.clientKey)")

        let presented = SHA256.hash(code)
        // Every configured code is compared, so the time taken says nothing about which matched.
        let matches = digests.reduce(false) { $0 || ConstantTime.equals($1, presented) }
        guard matches else {
            await kernel.audit.record("sign_in_failed", provider: Self.id, device: device.name, reason: AuthError.invalidInvite.code)
            throw AuthError.invalidInvite
        }
        var user = try await kernel.users.signIn(
            .init(identity: Identity(provider: Self.id, subject: Hex.encode(presented)), email: nil, emailVerified: false),
            linkingTo: nil
        )
        if user.displayName == nil, let displayName {
            user = try await kernel.users.update(user.id) { $0.displayName = displayName }
        }
        return user
    }
}

// What it holds (the codes' hashes) never reaches a log line, a `print` or a `dump`.
extension InviteCodeProvider: RedactedDescription {}
