// An example third-party provider, built only on AuthKernel's public API: sign in with a name and
// one of the invite codes listed in the configuration. It lives outside Sources/ on purpose; the
// CustomProviderTests target registers it and signs a user in through it.
//
// Configuration:  "providers": ["invite"],  "invite": { "codes": ["welcome-2026"] }

public import AuthKernel
public import Hummingbird
import Logging

/// Sign-in with a name and a shared invite code: `POST /api/v1/auth/invite/sign-in` with `name`, `invite`.
public struct InviteCodeProvider: AuthProvider {
    public static let id = "invite"

    let kernel: Kernel
    let codes: [[UInt8]]
    let attemptsPerIP: RateLimitRule

    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        let codes = try config.strings("codes", default: [])
        guard !codes.isEmpty else { throw ConfigError("invite.codes must list at least one invite code") }
        // Keep only hashes, and compare hashes in constant time.
        self.codes = codes.map { SHA256.hash($0) }
        attemptsPerIP = try config.rule("attempts_per_ip", default: RateLimitRule(limit: 10, window: 60))
    }

    struct SignIn: Decodable {
        var name: String
        var invite: String
    }

    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("invite/sign-in") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: SignIn.self, context: context)
            let name = body.name.trimmingCharacters(in: .whitespaces)
            guard (1...40).contains(name.count) else { throw AuthError.invalidRequest("The field `name` must be 1 to 40 characters.", field: "name") }
            try await kernel.rateLimiter.consume(attemptsPerIP, key: "invite.ip:\(context.clientIP)")
            let presented = SHA256.hash(body.invite)
            guard codes.contains(where: { ConstantTime.equals($0, presented) }) else { throw AuthError.invalidCredentials }

            var user = try await kernel.users.signIn(
                .init(identity: Identity(provider: Self.id, subject: name.lowercased()), email: nil, emailVerified: false),
                linkingTo: context.principal
            )
            if user.displayName == nil {
                user = try await kernel.users.update(user.id) { $0.displayName = name }
            }
            kernel.logger.info("invite sign-in", metadata: ["user.id": "\(user.id.lowercased)"])
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: .none)
        }
        return routes
    }
}

import Foundation
