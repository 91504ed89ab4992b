import AuthKernel
import Foundation

/// The two second factors this provider answers at `POST /api/v1/auth/mfa/verify`, and the policy
/// that asks for them.
extension TOTPProvider {
    /// `totp`: a code from the authenticator app.
    struct TOTPFactor: SecondFactor {
        let provider: TOTPProvider
        var name: String { "totp" }

        func isAvailable(for user: UserRecord) -> Bool { user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self)?.confirmed == true }

        func enrollments(for user: UserRecord) -> [SecondFactorEnrollment] {
            guard let totp = user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self), totp.confirmed else { return [] }
            return [SecondFactorEnrollment(type: name, createdAt: Date(timeIntervalSince1970: totp.createdAt))]
        }

        func removeAll(from user: inout UserRecord) {
            for key in [TOTPEnrollment.key, RecoveryCodes.key, FactorLock.key] { user.secrets[key] = nil }
        }

        func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
            guard case .string(let code) = answer else { return false }
            return try await provider.check(user.id) { totp, now in
                guard totp.confirmed, let secret = provider.open(totp) else { return false }
                guard let step = TOTPCode.matchingStep(code, secret: secret, now: now, after: totp.lastStep) else { return false }
                totp.lastStep = step
                return true
            }
        }
    }

    /// `recovery_code`: one of the ten single-use codes.
    struct RecoveryCodeFactor: SecondFactor {
        let provider: TOTPProvider
        var name: String { "recovery_code" }

        func isAvailable(for user: UserRecord) -> Bool { !(user.secret(RecoveryCodes.key, as: RecoveryCodes.self)?.hashes.isEmpty ?? true) }

        func enrollments(for user: UserRecord) -> [SecondFactorEnrollment] {
            guard let codes = user.secret(RecoveryCodes.key, as: RecoveryCodes.self) else { return [] }
            return [SecondFactorEnrollment(type: name, createdAt: Date(timeIntervalSince1970: codes.createdAt), remaining: codes.hashes.count)]
        }

        /// The codes alone: the authenticator app stays (an operator's "remove the recovery codes").
        func removeAll(from user: inout UserRecord) { user.secrets[RecoveryCodes.key] = nil }

        func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
            guard case .string(let code) = answer else { return false }
            let used = try await provider.useRecoveryCode(code, of: user.id)
            if used { await provider.kernel.audit.record("recovery_code_used", provider: TOTPProvider.id, user: user.id) }
            return used
        }
    }

    /// Asks every user with an authenticator app for a code (or a recovery code), whatever the
    /// first factor was; a user with another second factor (a passkey) may use a recovery code too.
    struct Policy: SignInPolicy {
        let hooks: SignInHooks
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
            let user = attempt.user
            let hasApp = user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self)?.confirmed == true
            let hasCodes = !(user.secret(RecoveryCodes.key, as: RecoveryCodes.self)?.hashes.isEmpty ?? true)
            if hasApp { return .requireSecondFactor(hasCodes ? ["totp", "recovery_code"] : ["totp"]) }
            if hasCodes, hooks.hasSecondFactor(user) { return .requireSecondFactor(["recovery_code"]) }
            return .allow
        }
    }
}
