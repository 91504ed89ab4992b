import AuthKernel
import Foundation
import Hummingbird
import Logging

/// The emailed code as a second factor after a right password (`password.login_requires_email_code`,
/// contract §10): offered to users with a verified address and neither TOTP nor a passkey. The code
/// is mailed with the 202 challenge; `POST /api/v1/auth/mfa/email-code` mails a new one (204; within
/// 30 seconds of the last, 429 with `retry_after`; at most 20 asks per user in 15 minutes); the client
/// answers it as `email_code`.
extension PasswordProvider {
    /// One code per challenge, keyed by a hash of the challenge token.
    static let secondFactorCodes = CodePolicy(ttl: 300, resendInterval: 30, maxAttempts: 5, maxFailures: 10, failureWindow: 900)
    static let secondFactorPurpose = "password.second_factor"

    struct EmailCodeFactor: SecondFactor {
        let kernel: Kernel
        var name: String { "email_code" }

        func isAvailable(for user: UserRecord) -> Bool { user.emailVerified && user.email != nil }

        func challengeStarted(_ challenge: SignInChallenge, for user: UserRecord) async throws {
            do {
                try await PasswordProvider.mailCode(kernel, challenge: challenge, user: user)
            } catch let error as AuthError where error.code == "RATE_LIMIT_EXCEEDED" {
                // Over the user's mail budget: the challenge stands, `/mfa/email-code` says when to ask again.
            }
        }

        func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
            guard case .string(let code) = answer, (1...16).contains(code.utf8.count) else { return false }
            do {
                try await kernel.codes.verify(
                    purpose: PasswordProvider.secondFactorPurpose, key: challenge.key, code: code, policy: PasswordProvider.secondFactorCodes)
                return true
            } catch AuthError.invalidCode {
                return false
            }
        }
    }

    /// Set while registration (`verify-email`) or a reset (`reset/complete`) signs someone in:
    /// the code just mailed to the address proved it, so no second one is asked for. Every other
    /// password sign-in (`/password/login`, the `/device` page) is asked.
    @TaskLocal static var addressProven = false

    /// Asks for the code after a right password, unless the user has a stronger second factor. A
    /// user whose address is not verified (`require_email_verification: false`) has nowhere to get
    /// it and is let through on the password alone.
    struct EmailCodePolicy: SignInPolicy {
        let hooks: SignInHooks
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
            guard !PasswordProvider.addressProven, attempt.amr == [PasswordProvider.id], attempt.user.emailVerified, attempt.user.email != nil,
                !hooks.hasSecondFactor(attempt.user)
            else { return .allow }
            return .requireSecondFactor(["email_code"])
        }
    }

    struct ChallengeBody: Decodable { var challenge: String }

    /// `POST /api/v1/auth/mfa/email-code`: mails the code of a challenge that offers `email_code` (204).
    func mailSecondFactorCode(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(as: ChallengeBody.self, context: context)
        let (challenge, user) = try await kernel.sessions.pendingChallenge(body.challenge)
        guard challenge.factors.contains("email_code"), user.email != nil, user.emailVerified else {
            throw AuthError.invalidState("This sign-in does not offer an emailed code.").worded("password.error.no_email_code")
        }
        try await Self.mailCode(kernel, challenge: challenge, user: user)
        return Response(status: .noContent)
    }

    /// Codes asked for as a second factor per user (20 per 15 minutes: a sign-in whose client asks
    /// again at once spends two), whoever asks: someone who knows the password cannot flood the
    /// owner's inbox.
    static let secondFactorMailsPerUser = RateLimitRule(limit: 20, window: 900)

    /// Issues the challenge's code and mails it.
    /// - Throws: 429 within the resend interval of the last one (that code is on its way; contract
    ///   §12: a resend never pretends), and beyond the user's budget (then no code is issued, so a
    ///   later ask mails one).
    static func mailCode(_ kernel: Kernel, challenge: SignInChallenge, user: UserRecord) async throws {
        guard let email = user.email else { return }
        do {
            try await kernel.rateLimiter.consume(
                secondFactorMailsPerUser, key: "password.second_factor.mail:\(user.id.lowercased)",
                message: "Too many sign-in codes were asked for this account. Wait before asking for another.")
        } catch {
            throw error.status == .tooManyRequests ? error.worded("password.error.too_many_codes") : error
        }
        let code = try await kernel.codes.issue(purpose: secondFactorPurpose, key: challenge.key, policy: secondFactorCodes)
        try await kernel.mailer.send(template: PasswordMail.secondFactor, to: email, code: code, lifetime: secondFactorCodes.ttl)
        kernel.logger.info("second-factor code mailed", metadata: ["user.id": "\(user.id.lowercased)"])
    }
}
