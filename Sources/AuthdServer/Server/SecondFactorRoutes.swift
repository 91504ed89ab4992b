import Logging
import AuthKernel
import AuthStorage
import Foundation
import Hummingbird

/// `POST /api/v1/auth/mfa/verify` (contract §10): completes a sign-in that a ``SignInPolicy`` held
/// for a second factor. The body carries `challenge` and the answer under the name of one of the
/// offered factors (`{"challenge": "…", "totp": "123456"}`); the registered ``SecondFactor`` of
/// that name checks it.
struct SecondFactorRoutes: Sendable {
    let kernel: Kernel

    func add(to api: RouterGroup<AuthRequestContext>) {
        let kernel = self.kernel
        api.post("mfa/verify") { request, context -> SessionResponse in
            let body = try await request.decodeJSON(as: [String: JSONValue].self, context: context)
            guard case .string(let token)? = body["challenge"] ?? body["Challenge"] else {
                throw AuthError.invalidRequest("The field `challenge` is required.", field: "challenge")
            }
            let (challenge, user) = try await kernel.sessions.pendingChallenge(token)
            let answered = challenge.factors.filter { body[$0] != nil }
            guard answered.count == 1, let name = answered.first, let answer = body[name], let factor = kernel.signInHooks.factor(named: name) else {
                throw AuthError.invalidRequest(
                    "Send the answer of exactly one of the offered factors: \(challenge.factors.joined(separator: ", ")).", field: "factors")
            }
            try await kernel.sessions.checkSecondFactorBudget(user.id)
            guard try await factor.verify(answer, for: user, challenge: challenge) else {
                kernel.logger.info("wrong second factor", metadata: ["user.id": "\(user.id.lowercased)", "factor": "\(name)"])
                await kernel.audit.record("second_factor_failed", provider: name, user: user.id)
                try await kernel.sessions.rejectAnswer(challenge)
            }
            return try await kernel.sessions.completeChallenge(challenge, factor: name)
        }
    }
}
