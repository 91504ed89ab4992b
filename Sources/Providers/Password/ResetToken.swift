import AuthKernel
import HTTPTypes
import Foundation

/// The token of the two-step email reset (contract §5): one of the kernel's single-use tokens
/// (``SingleUseTokens``), for the user, 600 s, carrying the email it was issued for.
enum ResetToken {
    static let purpose = "password.reset"
    static let ttl = 600
    static let invalid = AuthError(
        status: .unauthorized, code: "INVALID_CODE", message: "The reset token is wrong, used or expired. Start the reset again.",
        details: ["attempts_remaining": .number(0)])

    struct Pending: Sendable {
        var userID: UUID
        var email: String
    }

    /// A new token for `userID`.
    static func issue(for userID: UUID, email: String, tokens: SingleUseTokens) async throws -> String {
        // A new token cancels the ones before it.
        try await tokens.revokeAll(purpose: purpose, subject: userID.lowercased)
        return try await tokens.issue(purpose: purpose, subject: userID.lowercased, ttl: ttl, payload: ["email": .string(email)])
    }

    /// Whose token it is, without spending it (the new password is checked against that email first).
    static func pending(_ token: String, tokens: SingleUseTokens) async throws -> Pending? {
        try await tokens.peek(purpose: purpose, token: token).flatMap(Pending.init)
    }

    /// Spends the token; the user it was issued for.
    static func redeem(_ token: String, tokens: SingleUseTokens) async throws -> UUID {
        guard let pending = try await tokens.redeem(purpose: purpose, token: token).flatMap(Pending.init) else { throw invalid }
        return pending.userID
    }
}

extension ResetToken.Pending {
    init?(_ token: SingleUseTokens.Token) {
        guard let userID = UUID(uuidString: token.subject), case .string(let email)? = token.payload["email"] else { return nil }
        self.init(userID: userID, email: email)
    }
}
