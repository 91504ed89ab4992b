import AuthKernel
import Foundation

/// A signed-in device's approval as a second factor (contract §15): offered to an account with a
/// second factor while it has another full session; `POST /mfa/approval` makes a request bound to
/// the challenge, and `/mfa/verify` with `approval: request_id` answers it once approved.
struct ApprovalFactor: SecondFactor {
    let kernel: Kernel
    let settings: ApprovalSettings

    var name: String { ApprovalProvider.id }

    /// Only while another of the user's devices can approve: a full session of an app (neither a
    /// browser's, an API key's nor a device's).
    func isOffered(to user: UserRecord) async throws -> Bool {
        let now = kernel.clock.now()
        return try await kernel.sessions.sessions(of: user.id).contains { $0.kind == nil && !$0.isLimited && $0.expiresAt > now }
    }

    /// Whether `approval` was made for this challenge.
    static func answers(_ challenge: SignInChallenge, _ approval: ApprovalRecord) -> Bool {
        guard case .string(let key)? = approval.payload["challenge"] else { return false }
        return ConstantTime.equals(Array(key.utf8), Array(challenge.key.utf8))
    }

    /// While the other device has not answered: 400 `PENDING`, and nothing is spent; a denied or
    /// expired request says so the same way.
    func checkReady(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws {
        guard case .string(let id) = answer, let approval = try await kernel.approvals.approval(id: id), approval.kind == ApprovalProvider.kind,
            Self.answers(challenge, approval)
        else { return }
        switch approval.status(at: kernel.clock.now()) {
        case .pending: throw AuthError.pending
        case .denied: throw AuthError.denied
        case .expired: throw AuthError.expired
        case .approved, .completed: return
        }
    }

    /// Right when the request for this challenge was approved: it is collected, once.
    func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
        guard case .string(let id) = answer else { return false }
        do {
            let (_, collected) = try await kernel.approvals.collect(id: id, kind: ApprovalProvider.kind) { Self.answers(challenge, $0) }
            return collected.id == user.id
        } catch let error as AuthError where error.code == "NOT_FOUND" || error.code == "INVALID_STATE" {
            return false
        }
    }

    /// Asks the user's signed-in devices to approve the sign-in `challenge` holds.
    func request(challenge token: String, _ context: AuthRequestContext) async throws -> ApprovalProvider.Started {
        let (challenge, user) = try await kernel.sessions.pendingChallenge(token)
        guard challenge.factors.contains(name) else {
            throw AuthError.invalidRequest("This sign-in does not offer approval from another device.", field: "challenge").worded("approval.error.not_offered")
        }
        let network = context.clientNetwork
        do {
            try await kernel.rateLimiter.consume(
                [
                    RateLimitCharge(settings.startsPerNetwork, key: "approval.start.network:\(network)"),
                    RateLimitCharge(settings.pendingRule, key: "approval.pending:id:\(user.id.lowercased)"),
                ], message: "Too many approval requests for this account. Wait a while, or answer another way.")
        } catch {
            throw error.code == "RATE_LIMIT_EXCEEDED" ? error.worded("approval.error.too_many_approvals") : error
        }
        var blocked = user.secret(ApprovalBlocks.key, as: ApprovalBlocks.self)?.blocks(network, at: kernel.clock.now()) ?? false
        // The account's own limits, shared with starts by address or user name.
        if try await !ApprovalProvider.accountAllows("id:\(user.id.lowercased)", kernel: kernel, settings: settings) { blocked = true }
        let (approval, matchCode) = try await kernel.approvals.create(
            kind: ApprovalProvider.kind, userID: blocked ? nil : user.id, ttl: settings.ttl, deviceName: challenge.device.name ?? "A new device",
            payload: ["challenge": .string(challenge.key)], matchDigits: 2, platform: challenge.device.platform, network: network)
        return ApprovalProvider.Started(
            requestID: approval.id, requestToken: nil, matchCode: matchCode, expiresIn: settings.ttl, interval: settings.interval)
    }

    /// Offers the approval to every account with a second factor, beside the others: the policy
    /// of each factor demands its own, and the challenge offers those the user can answer.
    struct Policy: SignInPolicy {
        let hooks: SignInHooks
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
            guard !attempt.amr.contains(ApprovalProvider.id), hooks.hasSecondFactor(attempt.user) else { return .allow }
            return .requireSecondFactor([ApprovalProvider.id])
        }
    }
}
