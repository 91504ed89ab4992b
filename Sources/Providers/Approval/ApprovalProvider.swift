public import AuthKernel
import Foundation
public import Hummingbird
import Logging

/// Sign-in approved from another device (contract §15): a new device asks with an email or user
/// name and shows two digits; the person types them on a device where they are signed in, which
/// approves; the new device collects its session. Also a second factor, and a step on `/login`.
///
/// - `POST /api/v1/auth/approval/start` → `request_id`, `request_token`, `match_code`, `expires_in`, `interval`.
/// - `POST /api/v1/auth/approval/{request_id}/complete` with `request_token` → the session once approved.
/// - `POST /api/v1/auth/mfa/approval` with `challenge` → a request answering that second-factor challenge.
///
/// Approving and denying are the kernel's `/approvals` endpoints, as for every kind of request.
public struct ApprovalProvider: AuthProvider {
    /// `approval`: its name in `providers`, its configuration section and `amr`.
    public static let id = "approval"
    /// Its sentences: English and German.
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
    /// How the sign-in page names it.
    public static let methodName = "Approve from your phone"
    /// Listed in `providers` to start.
    public static let startsByDefault = false
    /// The kind of its requests in `/approvals`, events and pushes.
    public static let kind = "sign_in"

    let kernel: Kernel
    let settings: ApprovalSettings

    /// Reads its configuration section and registers its kind of request and its second factor.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        let settings = try ApprovalSettings(&config)
        self.settings = settings
        kernel.approvals.register(
            kind: Self.kind,
            ApprovalKindRules(
                auditPrefix: "approval_sign_in", matchAttempts: 1,
                pushes: { [kernel] userID in
                    guard let user = try? await kernel.users.user(id: userID) else { return true }
                    return !(user.secret(ApprovalBlocks.key, as: ApprovalBlocks.self)?.isQuiet(at: kernel.clock.now()) ?? false)
                },
                denied: { [kernel] approval, reason in
                    guard reason == "not_me" else { return }
                    await Self.notMe(approval, kernel: kernel, settings: settings)
                }))
        if settings.secondFactor {
            kernel.signInHooks.register(ApprovalFactor(kernel: kernel, settings: settings))
            kernel.signInHooks.register(ApprovalFactor.Policy(hooks: kernel.signInHooks))
        }
    }

    struct StartBody: Decodable {
        var email: String?
        var username: String?
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case email, username, deviceName = "device_name", platform }
    }
    struct CompleteBody: Decodable {
        var requestToken: String
        enum CodingKeys: String, CodingKey { case requestToken = "request_token" }
    }
    struct ChallengeBody: Decodable { var challenge: String }

    /// A request made: what the new device shows and keeps.
    struct Started: ResponseEncodable {
        var requestID: String
        var requestToken: String?
        var matchCode: String
        var expiresIn: Int
        var interval: Int
        enum CodingKeys: String, CodingKey {
            case requestID = "request_id", requestToken = "request_token", matchCode = "match_code", expiresIn = "expires_in", interval
        }
    }

    /// Who a request names: an email address or a user name, as typed (normalised).
    enum Identifier: Sendable {
        case email(String)
        case username(String)

        /// The key its limits count under.
        var key: String {
            switch self {
            case .email(let e): "e:\(e)"
            case .username(let u): "u:\(u)"
            }
        }
        var text: String {
            switch self {
            case .email(let e): e
            case .username(let u): u
            }
        }
    }

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("approval/start") { request, context -> Started in
            let body = try await request.decodeJSON(as: StartBody.self, context: context)
            let device = try DeviceInfo(name: body.deviceName, platform: body.platform)
            return try await start(try identifier(email: body.email, username: body.username), device: device, context)
        }
        routes.post("approval/{request_id}/complete") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: CompleteBody.self, context: context)
            let id = try context.parameters.require("request_id")
            let (user, approver, device) = try await collect(id: id, token: body.requestToken)
            return try await kernel.sessions.signIn(
                user, amr: [Self.id], device: device, multiFactor: approver.amr.contains("mfa"), vouchedAt: approver.authTime)
        }
        if settings.secondFactor {
            routes.post("mfa/approval") { request, context -> Started in
                let body = try await request.decodeJSON(as: ChallengeBody.self, context: context)
                return try await ApprovalFactor(kernel: kernel, settings: settings).request(challenge: body.challenge, context)
            }
        }
        return routes
    }

    /// The identifier of a start: exactly one of `email` and `username`.
    func identifier(email: String?, username: String?) throws -> Identifier {
        switch (email, username) {
        case (let email?, nil):
            guard let address = EmailAddress(email) else { throw AuthError.invalidEmail }
            return .email(address.value)
        case (nil, let name?):
            guard Username.isValid(name) else { throw AuthError.invalidRequest("That is not a user name.", field: "username") }
            return .username(name.lowercased())
        default:
            throw AuthError.invalidRequest("Send `email` or `username`, one of them.", field: "email")
        }
    }

    /// Makes a request for the account `identifier` names, within the limits, known or not: an
    /// unknown, disabled or blocked account gets a decoy of the same shape, made by the same work.
    func start(_ identifier: Identifier, device: DeviceInfo, _ context: AuthRequestContext) async throws -> Started {
        let network = context.clientNetwork
        do {
            try await kernel.rateLimiter.consume(
                [
                    RateLimitCharge(settings.startsPerNetwork, key: "approval.start.network:\(network)"),
                    RateLimitCharge(settings.pendingRule, key: "approval.pending:\(identifier.key)"),
                    RateLimitCharge(settings.startsPerIdentifier, key: "approval.start:\(identifier.key)"),
                    RateLimitCharge(settings.startsPerIdentifierNetwork, key: "approval.start:\(identifier.key):\(network)"),
                ], message: "Too many sign-in requests for this account. Wait a while, or sign in another way.")
        } catch {
            throw error.code == "RATE_LIMIT_EXCEEDED" ? error.worded("approval.error.too_many_requests") : error
        }
        let user: UserRecord?
        switch identifier {
        case .email(let email): user = try await kernel.users.user(email: email)
        case .username(let name): user = try await kernel.users.user(username: name)
        }
        let now = kernel.clock.now()
        var target: UUID?
        if let user, user.disabledAt == nil, !(user.secret(ApprovalBlocks.key, as: ApprovalBlocks.self)?.blocks(network, at: now) ?? false) {
            target = user.id
        }
        // The same limits per account, however it is named (an address, a user name, a second
        // factor's challenge); over them the request is a decoy, so nothing says two names are one
        // account. Unknown accounts count under what was typed: the same work either way.
        if try await !accountAllows(user.map { "id:\($0.id.lowercased)" } ?? identifier.key) { target = nil }
        let token = Base64URL.encode(SecureRandom.bytes(32))
        let (approval, matchCode) = try await kernel.approvals.create(
            kind: Self.kind, userID: target, ttl: settings.ttl, deviceName: device.name ?? "A new device",
            payload: ["request_token": .string(Self.digest(token))], matchDigits: 2, platform: device.platform, network: network)
        // Neither an audit line nor an info one: the request is a durable record already, a start
        // is one write, and starts come in floods (a real one is logged when it is delivered).
        kernel.logger.debug("sign-in approval requested", metadata: ["request.ip": "\(context.clientIP)"])
        return Started(requestID: approval.id, requestToken: token, matchCode: matchCode, expiresIn: settings.ttl, interval: settings.interval)
    }

    /// Whether the account under `key` may have another request asked of its devices now (the
    /// pending and hourly limits per account); takes the request's place when it may.
    func accountAllows(_ key: String) async throws -> Bool {
        try await Self.accountAllows(key, kernel: kernel, settings: settings)
    }

    static func accountAllows(_ key: String, kernel: Kernel, settings: ApprovalSettings) async throws -> Bool {
        try await kernel.rateLimiter.attempt([
            RateLimitCharge(settings.pendingRule, key: "approval.account.pending:\(key)"),
            RateLimitCharge(settings.startsPerIdentifier, key: "approval.account:\(key)"),
        ]) == nil
    }

    /// The hex SHA-256 of a request token: only this is stored.
    static func digest(_ token: String) -> String { Hex.encode(SHA256.hash(token)) }

    /// Whether `token` is the request's own (compared on hashes, in constant time).
    static func holds(_ token: String, _ approval: ApprovalRecord) -> Bool {
        guard token.utf8.count <= 64, case .string(let stored)? = approval.payload["request_token"] else { return false }
        return ConstantTime.equals(Array(digest(token).utf8), Array(stored.utf8))
    }

    /// Collects an approved request for its requester, once: the user, the approving session as
    /// it was, and the new device's labels.
    func collect(id: String, token: String) async throws -> (UserRecord, ApprovalRecord.Approver, DeviceInfo) {
        let (approval, user) = try await kernel.approvals.collect(id: id, kind: Self.kind) { Self.holds(token, $0) }
        guard let approver = approval.approvedBy else { throw AuthError.denied }
        let device = (try? DeviceInfo(name: approval.deviceName, platform: approval.platform)) ?? .none
        kernel.logger.info("sign-in approved from another device collected", metadata: ["user.id": "\(user.id.lowercased)"])
        return (user, approver, device)
    }

    /// A "not me": that network's requests become decoys, pushes go quiet, the owner is told.
    static func notMe(_ approval: ApprovalRecord, kernel: Kernel, settings: ApprovalSettings) async {
        guard let userID = approval.userID else { return }
        let now = kernel.clock.now()
        do {
            let user = try await kernel.users.update(userID) { user in
                var blocks = user.secret(ApprovalBlocks.key, as: ApprovalBlocks.self) ?? ApprovalBlocks()
                blocks.notMe(network: approval.network, now: now, block: settings.notMeBlock, quiet: settings.notMeQuiet)
                try user.setSecret(ApprovalBlocks.key, blocks)
            }
            kernel.logger.warning("sign-in request refused as not the owner's", metadata: ["user.id": "\(userID.lowercased)"])
            // The others from that network wait no longer: they are the same stranger's.
            for other in try await kernel.approvals.pending(userID: userID, kind: Self.kind) where other.network == approval.network {
                _ = try? await kernel.approvals.deny(id: other.id, userID: userID)
            }
            guard let email = user.email, user.emailVerified else { return }
            // Its values in the language the mail is written in: the owner's, else the request's.
            let messages = kernel.messages
            let language = messages.available(user.locale) ?? Messages.language
            try await kernel.mailer.send(
                template: ApprovalMail.notMe, to: email,
                values: [
                    "device": deviceName(approval.deviceName, messages: messages, language: language),
                    "network": approval.network ?? messages.text("approval.not_me.unknown_network", language: language),
                    "when": messages.mailTime(approval.createdAt, language: language),
                    "block": messages.lifetime(settings.notMeBlock, language: language),
                ], language: language)
        } catch {
            kernel.logger.error("could not record a \"not me\"", metadata: ["user.id": "\(userID.lowercased)", "error": "\(error)"])
        }
    }

    /// The device a "not me" mail names: its own name, or the stand-ins a request gets without
    /// one ("A new device", "A web browser") in the mail's language.
    static func deviceName(_ stored: String?, messages: Messages, language: String?) -> String {
        switch stored {
        case nil: messages.text("approval.not_me.new_device", language: language)
        case "A new device": messages.text("approval.not_me.device_new", language: language)
        case browser.name: messages.text("approval.not_me.device_browser", language: language)
        case let name?: name
        }
    }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension ApprovalProvider: RedactedDescription {}
