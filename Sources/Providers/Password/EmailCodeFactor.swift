public import AuthKernel
import Foundation
import Hummingbird
import Logging

/// The emailed code as a second factor after a right password (`password.login_requires_email_code`,
/// contract §10): offered to users with a verified address and neither TOTP nor a passkey. The code
/// is mailed with the 202 challenge; `POST /api/v1/auth/mfa/email-code` mails a new one (at most
/// every 30 seconds); the client answers it as `email_code`.
extension PasswordProvider {
    /// One code per challenge, keyed by a hash of the challenge token.
    static let secondFactorCodes = CodePolicy(ttl: 300, resendInterval: 30, maxAttempts: 5, maxFailures: 10, failureWindow: 900)
    static let secondFactorPurpose = "password.second_factor"
    static let secondFactorTemplate = "sign_in_code"

    struct EmailCodeFactor: SecondFactor {
        let kernel: Kernel
        var name: String { "email_code" }

        func isAvailable(for user: UserRecord) -> Bool { user.emailVerified && user.email != nil }

        func challengeStarted(_ challenge: SignInChallenge, for user: UserRecord) async throws {
            try await PasswordProvider.mailCode(kernel, challenge: challenge, user: user)
        }

        func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
            guard case .string(let code) = answer, (1...16).contains(code.utf8.count) else { return false }
            do {
                try await kernel.codes.verify(
                    purpose: PasswordProvider.secondFactorPurpose, key: PasswordProvider.codeKey(challenge), code: code, policy: PasswordProvider.secondFactorCodes)
                return true
            } catch let error as AuthError where error.code == AuthError.invalidCode.code {
                return false
            }
        }
    }

    /// Set while `password/login` signs someone in: registration and resets proved the address with
    /// a mailed code already, and are not asked for another.
    @TaskLocal static var passwordLogin = false

    /// Asks for the code after a right password at login, unless the user has a stronger second factor.
    struct EmailCodePolicy: SignInPolicy {
        let hooks: SignInHooks
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
            guard PasswordProvider.passwordLogin, attempt.amr == [PasswordProvider.id], !hooks.hasSecondFactor(attempt.user) else { return .allow }
            return .requireSecondFactor(["email_code"])
        }
    }

    static func codeKey(_ challenge: SignInChallenge) -> String { Hex.encode(SHA256.hash(challenge.token)) }

    struct ChallengeBody: Decodable { var challenge: String }

    /// `POST /api/v1/auth/mfa/email-code`: mails the code of a challenge that offers `email_code` (204).
    func mailSecondFactorCode(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(as: ChallengeBody.self, context: context)
        let (challenge, user) = try await kernel.sessions.pendingChallenge(body.challenge)
        guard challenge.factors.contains("email_code"), user.email != nil, user.emailVerified else {
            throw AuthError.invalidState("This sign-in does not offer an emailed code.")
        }
        try await Self.mailCode(kernel, challenge: challenge, user: user)
        return Response(status: .noContent)
    }

    /// Issues the challenge's code (429 within `resend_interval` of the last) and mails it.
    static func mailCode(_ kernel: Kernel, challenge: SignInChallenge, user: UserRecord) async throws {
        guard let email = user.email else { return }
        let code = try await kernel.codes.issue(purpose: secondFactorPurpose, key: codeKey(challenge), policy: secondFactorCodes)
        try await kernel.mailer.send(template: secondFactorTemplate, to: email, values: ["lifetime": MailTemplate.lifetime(secondFactorCodes.ttl)], code: code)
        kernel.logger.info("second-factor code mailed", metadata: ["user.id": "\(user.id.lowercased)"])
    }
}
