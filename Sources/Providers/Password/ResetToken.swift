import AuthKernel
import Hummingbird
import Foundation

/// The token of the two-step email reset (contract §5): `ID.SECRET`, single use, 600 s. It is a
/// one-time code of its own purpose whose key is the SHA-256 of a random id, so neither the id
/// nor the secret is stored: the secret only as the code service's keyed hash.
enum ResetToken {
    static let purpose = "password_reset_token"
    /// One try: the id is 128 random bits, and a wrong secret kills the token.
    static let policy: CodePolicy = {
        var p = CodePolicy(ttl: 600, resendInterval: 0, maxAttempts: 1, maxFailures: 5, failureWindow: 600)
        p.digits = 16
        return p
    }()
    static let invalid = AuthError(
        status: .unauthorized, code: "INVALID_CODE", message: "The reset token is wrong, used or expired. Start the reset again.",
        details: ["attempts_remaining": .number(0)])

    struct Pending: Sendable {
        var userID: UUID
        var email: String
    }

    /// A new token for `userID`.
    static func issue(for userID: UUID, email: String, codes: OneTimeCodeService) async throws -> String {
        let id = Base64URL.encode(SecureRandom.bytes(16))
        let secret = try await codes.issue(
            purpose: purpose, key: key(id), policy: policy, payload: ["user_id": .string(userID.lowercased), "email": .string(email)])
        return id + "." + secret
    }

    /// Whose token it is, without spending it (the new password is checked against that email first).
    static func pending(_ token: String, codes: OneTimeCodeService) async throws -> Pending? {
        guard let (id, _) = split(token), let payload = try await codes.pendingPayload(purpose: purpose, key: key(id)) else { return nil }
        return Pending(payload)
    }

    /// Spends the token; the user it was issued for.
    static func redeem(_ token: String, codes: OneTimeCodeService) async throws -> UUID {
        guard let (id, secret) = split(token) else { throw invalid }
        let payload: [String: JSONValue]
        do {
            payload = try await codes.verify(purpose: purpose, key: key(id), code: secret, policy: policy)
        } catch let error as AuthError where error.code == "INVALID_CODE" {
            throw invalid
        }
        guard let pending = Pending(payload) else { throw invalid }
        return pending.userID
    }

    private static func key(_ id: String) -> String { Hex.encode(SHA256.hash(id)) }

    private static func split(_ token: String) -> (String, String)? {
        guard token.utf8.count <= 64 else { return nil }
        let parts = token.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].utf8.count == 22, parts[1].utf8.count == policy.digits else { return nil }
        return (String(parts[0]), String(parts[1]))
    }
}

extension ResetToken.Pending {
    init?(_ payload: [String: JSONValue]) {
        guard case .string(let id) = payload["user_id"], let userID = UUID(uuidString: id), case .string(let email) = payload["email"] else { return nil }
        self.init(userID: userID, email: email)
    }
}
