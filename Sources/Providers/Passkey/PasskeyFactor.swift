import AuthKernel
import Foundation
import Logging

extension PasskeyProvider {
    /// `passkey` as the second factor after another sign-in: the 202 carries `passkey_options`
    /// (request options listing the user's passkeys), and the assertion comes back as `credential`.
    struct Factor: SecondFactor {
        let provider: PasskeyProvider
        var name: String { PasskeyProvider.id }
        var answerField: String { "credential" }

        func isAvailable(for user: UserRecord) -> Bool { !PasskeyRecord.all(user).isEmpty }

        func enrollments(for user: UserRecord) -> [SecondFactorEnrollment] {
            PasskeyRecord.all(user).map { SecondFactorEnrollment(type: name, createdAt: Date(timeIntervalSince1970: $0.createdAt), name: $0.name) }
        }

        func removeAll(from user: inout UserRecord) {
            user.secrets[PasskeyRecord.key] = nil
            user.identities.removeAll { $0.provider == PasskeyProvider.id }
        }

        func challengeFields(_ challenge: SignInChallenge, for user: UserRecord) async throws -> [String: JSONValue] {
            let webauthn = try await provider.challenges.issue(.secondFactor, key: challenge.key)
            let options = RequestOptions(
                challenge: webauthn, rpId: provider.settings.rpID, allowCredentials: PasskeyRecord.all(user).map { Descriptor(id: $0.id) })
            let value = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(options))
            return ["passkey_options": value]
        }

        func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
            guard let credential = try? JSONDecoder().decode(AuthenticationCredential.self, from: JSONEncoder().encode(answer)) else { return false }
            do {
                _ = try await provider.verifiedAssertion(credential, purpose: .secondFactor, key: challenge.key, expectedUser: user.id)
                return true
            } catch let error as WebAuthnError {
                provider.kernel.logger.info("passkey second factor refused", metadata: ["user.id": "\(user.id.lowercased)", "reason": "\(error)"])
                return false
            }
        }
    }

    /// Asks every user with a passkey for it when they sign in another way.
    struct Policy: SignInPolicy {
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
            PasskeyRecord.all(attempt.user).isEmpty ? .allow : .requireSecondFactor([PasskeyProvider.id])
        }
    }
}
