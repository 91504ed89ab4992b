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
            let offered = challenge.factors.compactMap { kernel.signInHooks.factor(named: $0) }
            let answered = offered.filter { body[$0.answerField] != nil }
            guard answered.count == 1, let factor = answered.first, let answer = body[factor.answerField] else {
                let fields = offered.map(\.answerField)
                throw AuthError.invalidRequest("Send the answer of exactly one of the offered factors: \(fields.joined(separator: ", ")).", field: "factors")
            }
            let name = factor.name
            try await factor.checkReady(answer, for: user, challenge: challenge)
            let reservation = try await kernel.sessions.reserveAnswer(challenge, network: ClientNetwork.network(for: context.clientIP))
            guard try await factor.verify(answer, for: user, challenge: challenge) else {
                kernel.logger.info("wrong second factor", metadata: ["user.id": "\(user.id.lowercased)", "factor": "\(name)"])
                await kernel.audit.record("second_factor_failed", provider: name, user: user.id)
                throw AuthError.invalidCode(attemptsRemaining: reservation.remaining)
            }
            try await kernel.sessions.releaseAnswer(challenge, reservation)
            return try await kernel.sessions.completeChallenge(challenge, factor: name)
        }

        // What the signed-in user has set up, whichever providers offer the factors.
        api.get("mfa") { _, context -> Response in
            let principal = try context.requirePrincipal()
            let enrollments = kernel.signInHooks.enrollments(for: principal.user)
            let factors = enrollments.filter { $0.remaining == nil }.sorted { $0.createdAt < $1.createdAt }.map { enrollment -> JSONValue in
                .object(["type": .string(enrollment.type), "created_at": .string(Timestamp.string(enrollment.createdAt))])
            }
            let codes = enrollments.compactMap(\.remaining).reduce(0, +)
            var w = JSONWriter(capacity: 256)
            w.value(.object(["factors": .array(factors), "recovery_codes_left": .number(Double(codes))]))
            return w.response(status: .ok)
        }
    }
}
