public import AuthKernel
public import Hummingbird
import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Asks for a code mailed to the account's verified address when someone signs in from a network
/// (an IPv4 /24, an IPv6 /64) the account has not used before, whichever provider checked the
/// first factor. The first network an account signs in from is trusted as it is; the last
/// `remember` confirmed networks are kept, as keyed hashes, in the user's secrets.
///
/// ```json
/// "providers": ["email", "password", "new-network"],  "new-network": { "remember": 10 }
/// ```
public struct NewNetworkConfirmation: AuthProvider {
    public static let id = "new-network"
    public static let startsByDefault = false
    /// The second factor's name: the field of `POST /api/v1/auth/mfa/verify` that carries the code.
    public static let factorName = "network_code"
    static let secretKey = "new_network.known"
    static let mailTemplate = "new-network.code"
    static let codes = CodePolicy(ttl: 300, resendInterval: 0, maxAttempts: 5, maxFailures: 10, failureWindow: 900)

    /// Its one setting.
    public static let settings = [Setting("remember", .integer, default: "10", "Networks remembered per account (1–100).")]

    /// The code's mail, registered before `init` runs.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            mailTemplate, "The code asked when a sign-in comes from a new network (`{{code}}`, `{{lifetime}}`).",
            .code(
                subject: "Your {{product_name}} sign-in code: {{code}}",
                lead: "Someone is signing in to your {{product_name}} account from a network it has not used before. If it is you, enter",
                tail: "It expires in {{lifetime}}. If it is not you, change your password."))
    ]

    /// Registers the policy and the second factor with the kernel.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        let remember = try config.int("remember", default: 10, in: 1...100)
        // A server-wide pepper: the stored hashes say nothing about where anyone has been.
        let networks = Networks(pepper: try kernel.secret(named: "new-network"), remember: remember, users: kernel.users)
        kernel.signInHooks.register(Policy(networks: networks))
        kernel.signInHooks.register(Factor(kernel: kernel, networks: networks))
    }

    /// No routes of its own: the code is answered at the kernel's `POST /api/v1/auth/mfa/verify`.
    public func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }

    struct Policy: SignInPolicy {
        let networks: Networks
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
            guard let network = networks.hash(of: attempt.clientIP) else { return .allow }
            let known = networks.known(attempt.user)
            if known.contains(network) { return .allow }
            if known.isEmpty {  // trust on first use
                try await networks.remember(network, for: attempt.user.id)
                return .allow
            }
            // Without a verified address there is no one to ask; the kernel would refuse the sign-in.
            return attempt.user.emailVerified && attempt.user.email != nil ? .requireSecondFactor([NewNetworkConfirmation.factorName]) : .allow
        }
    }

    struct Factor: SecondFactor {
        let kernel: Kernel
        let networks: Networks
        var name: String { NewNetworkConfirmation.factorName }

        func isAvailable(for user: UserRecord) -> Bool { user.emailVerified && user.email != nil }

        func challengeStarted(_ challenge: SignInChallenge, for user: UserRecord) async throws {
            guard let email = user.email else { return }
            let code = try await kernel.codes.issue(purpose: NewNetworkConfirmation.id, key: challenge.key, policy: NewNetworkConfirmation.codes)
            try await kernel.mailer.send(
                template: NewNetworkConfirmation.mailTemplate, to: email,
                values: ["lifetime": MailTemplate.lifetime(NewNetworkConfirmation.codes.ttl)], code: code)
        }

        func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
            guard case .string(let code) = answer, (1...16).contains(code.utf8.count) else { return false }
            do {
                try await kernel.codes.verify(purpose: NewNetworkConfirmation.id, key: challenge.key, code: code, policy: NewNetworkConfirmation.codes)
            } catch AuthError.invalidCode {
                return false
            }
            if let network = networks.hash(of: challenge.clientIP) { try await networks.remember(network, for: user.id) }
            return true
        }
    }

    /// The networks an account has used, as keyed hashes in the user's secrets.
    struct Networks: Sendable {
        let pepper: [UInt8]
        let remember: Int
        let users: UserService

        func known(_ user: UserRecord) -> [String] { user.secret(NewNetworkConfirmation.secretKey, as: [String].self) ?? [] }

        func remember(_ network: String, for userID: UUID) async throws {
            let remember = self.remember
            _ = try await users.update(userID) { user in
                let known = (user.secret(NewNetworkConfirmation.secretKey, as: [String].self) ?? []).filter { $0 != network }
                try user.setSecret(NewNetworkConfirmation.secretKey, Array((known + [network]).suffix(remember)))
            }
        }

        /// The keyed hash of the /24 or /64 that `address` is in; nil for an address it cannot read.
        func hash(of address: String?) -> String? {
            guard let address else { return nil }
            var v4 = in_addr(), v6 = in6_addr()
            let prefix: [UInt8]
            if inet_pton(AF_INET, address, &v4) == 1 {
                prefix = withUnsafeBytes(of: &v4) { Array($0.prefix(3)) }
            } else if inet_pton(AF_INET6, address, &v6) == 1 {
                prefix = withUnsafeBytes(of: &v6) { Array($0.prefix(8)) }
            } else {
                return nil
            }
            return Hex.encode(SHA256.hmac(key: pepper, message: prefix))
        }
    }
}
