import Logging
public import AuthStorage
import Foundation

/// Sign-ins waiting for a second factor (contract §10): a random token, of which only the SHA-256
/// is stored (as a code record), single use, 5 minutes, dead after 5 wrong answers.
extension SessionService {
    /// Purpose of the code records that hold challenges.
    static let challengePurpose = "sign_in_challenge"
    /// Seconds a challenge lives.
    static let challengeTTL = 300
    /// Wrong answers that kill a challenge.
    static let challengeAttempts = 5

    /// Stores a challenge for `user` (as read before its first factor was checked) and tells the
    /// offered factors.
    /// - Parameter token: the challenge's token when the caller derives it from a secret of its own
    ///   (the `/device` page, from its cookie, so that the token is stored nowhere); random otherwise.
    package func startChallenge(
        _ user: UserRecord, amr: [String], device: DeviceInfo, factors: [String], requireUnchangedCredentials: Bool, token: String? = nil
    ) async throws -> SecondFactorRequired {
        let token = token ?? Base64URL.encode(SecureRandom.bytes(32))
        let now = clock.now()
        let expires = now.addingTimeInterval(TimeInterval(Self.challengeTTL))
        var payload: [String: JSONValue] = [
            "user_id": .string(user.id.lowercased), "amr": .array(amr.map(JSONValue.string)), "factors": .array(factors.map(JSONValue.string)),
            "credential_version": .number(Double(user.credentialVersion)), "check_credentials": .bool(requireUnchangedCredentials),
        ]
        if let name = device.name { payload["device_name"] = .string(name) }
        if let platform = device.platform { payload["platform"] = .string(platform) }
        let clientIP = RequestInfo.current?.clientIP
        if let clientIP { payload["client_ip"] = .string(clientIP) }
        let record = CodeRecord(
            purpose: Self.challengePurpose, key: SignInChallenge.key(token: token), digest: "challenge", sentAt: now, expiresAt: expires, payload: payload
        )
        try await store.write([.code(purpose: record.purpose, key: record.key)]) { $0.put(record) }
        let challenge = SignInChallenge(
            token: token, userID: user.id, amr: amr, factors: factors, expiresAt: expires, device: device, clientIP: clientIP)
        var extra: [String: JSONValue] = [:]
        for name in factors {
            guard let factor = hooks.factor(named: name) else { continue }
            try await factor.challengeStarted(challenge, for: user)
            extra.merge(try await factor.challengeFields(challenge, for: user)) { first, _ in first }
        }
        logger.info("second factor required", metadata: ["user.id": "\(user.id.lowercased)", "factors": "\(factors.joined(separator: ","))"])
        return SecondFactorRequired(challenge: token, factors: factors, expiresIn: Self.challengeTTL, extra: extra)
    }


    /// The live challenge `token` names and its user (for a factor's own route, e.g. one that mails its code on request).
    /// - Throws: 401 `INVALID_CHALLENGE` for an unknown, used, expired or dead one.
    public func pendingChallenge(_ token: String) async throws -> (SignInChallenge, UserRecord) {
        guard token.utf8.count <= 64 else { throw AuthError.invalidChallenge }
        let key = SignInChallenge.key(token: token), now = clock.now()
        let found = try await store.read([.code(purpose: Self.challengePurpose, key: key)]) { state -> CodeRecord? in
            guard let record = state.code(purpose: Self.challengePurpose, key: key), record.expiresAt > now,
                record.attempts < Self.challengeAttempts
            else { return nil }
            return record
        }
        guard let record = found, let payload = record.payload, case .string(let id) = payload["user_id"], let userID = UUID(uuidString: id),
            let user = try await store.read([.user(userID)], { $0.user(id: userID) })
        else { throw AuthError.invalidChallenge }
        let challenge = SignInChallenge(
            token: token, userID: userID, amr: Self.strings(payload["amr"]), factors: Self.strings(payload["factors"]), expiresAt: record.expiresAt,
            device: Self.device(payload), clientIP: Self.string(payload["client_ip"])
        )
        return (challenge, user)
    }

    /// Takes one of the challenge's answers and one wrong-answer slot of its user's budget, in one
    /// write, before the answer is checked (contract §12): concurrent answers can never exceed either.
    /// The budget is 10 wrong second factors in 15 minutes per client network (IPv4 /24, IPv6 /48)
    /// and 50 for the user from everywhere, kept in the user's record so it holds across restarts
    /// and instances; a right answer gives its slot back (``releaseAnswer(_:)``), so only wrong ones
    /// count, and one network that knows the password cannot hold the owner's factors shut.
    /// - Parameter network: ``ClientNetwork/network(for:)`` of the answering client.
    /// - Throws: 429 when the network's or the user's budget is spent; 401 `INVALID_CHALLENGE` when
    ///   the challenge has no answer left, or is used or expired.
    package func reserveAnswer(_ challenge: SignInChallenge, network: String) async throws -> AnswerReservation {
        let key = challenge.key, now = clock.now()
        let slot = SecondFactorFailure(at: now.timeIntervalSince1970, network: network)
        // The user first, then the code: the order every write that takes both locks them in.
        return try await store.write([.user(challenge.userID), .code(purpose: Self.challengePurpose, key: key)]) { state -> AnswerReservation in
            guard var record = state.code(purpose: Self.challengePurpose, key: key), record.expiresAt > now, record.attempts < Self.challengeAttempts,
                var user = state.user(id: challenge.userID)
            else { throw AuthError.invalidChallenge }
            var failures = Self.recentFailures(of: user, now: now)
            try Self.checkBudget(failures, network: network, now: now)
            failures.append(slot)
            try? user.setSecret(Self.failuresKey, failures)
            record.attempts += 1
            state.put(user)
            state.put(record)
            return AnswerReservation(remaining: Self.challengeAttempts - record.attempts, slot: slot)
        }
    }

    /// Gives a right answer's slot back to its user's budget.
    package func releaseAnswer(_ challenge: SignInChallenge, _ reservation: AnswerReservation) async throws {
        let now = clock.now()
        try await store.write([.user(challenge.userID)]) { state in
            guard var user = state.user(id: challenge.userID) else { return }
            var failures = Self.recentFailures(of: user, now: now)
            guard let index = failures.firstIndex(of: reservation.slot) else { return }
            failures.remove(at: index)
            try? user.setSecret(Self.failuresKey, failures)
            state.put(user)
        }
    }

    /// Where a user's wrong second factors of the last 15 minutes are kept.
    static let failuresKey = "mfa.failures"
    /// Wrong second factors per client network per 15 minutes.
    static let secondFactorsPerNetwork = RateLimitRule(limit: 10, window: 900)
    /// Wrong second factors per user per 15 minutes, from every network together.
    static let secondFactorsPerUser = RateLimitRule(limit: 50, window: 900)

    /// The failures of the window; an older record's bare times count under no network.
    static func recentFailures(of user: UserRecord, now: Date) -> [SecondFactorFailure] {
        let since = now.timeIntervalSince1970 - Double(secondFactorsPerUser.window)
        let stored = user.secret(failuresKey, as: [SecondFactorFailure].self)
            ?? (user.secret(failuresKey, as: [Double].self) ?? []).map { SecondFactorFailure(at: $0, network: "") }
        return stored.filter { $0.at > since }.suffix(secondFactorsPerUser.limit)
    }

    /// 429 when `network` has spent its budget, or the user has spent the cap.
    static func checkBudget(_ failures: [SecondFactorFailure], network: String, now: Date) throws(AuthError) {
        let local = failures.filter { $0.network == network }
        for (counted, rule) in [(local, secondFactorsPerNetwork), (failures, secondFactorsPerUser)] where counted.count >= rule.limit {
            let oldest = counted.map(\.at).min() ?? now.timeIntervalSince1970
            throw AuthError.rateLimited(
                retryAfter: max(1, Int((oldest + Double(rule.window) - now.timeIntervalSince1970).rounded(.up))),
                message: "Too many wrong second factors. Wait before trying again.")
        }
    }

    /// Uses up `challenge` (answered right with `factor`) and starts its session, `amr` listing both
    /// factors and `mfa`.
    /// - Throws: 401 `INVALID_CHALLENGE` when it was used meanwhile.
    package func completeChallenge(_ challenge: SignInChallenge, factor: String, kind: SessionRecord.Kind? = nil) async throws -> SessionResponse {
        let key = challenge.key, now = clock.now()
        let payload = try await store.write([.code(purpose: Self.challengePurpose, key: key)]) { state -> [String: JSONValue] in
            // The answer's own reservation counts among the attempts: up to all of them.
            guard let record = state.code(purpose: Self.challengePurpose, key: key), record.expiresAt > now,
                record.attempts <= Self.challengeAttempts, let payload = record.payload
            else { throw AuthError.invalidChallenge }
            state.deleteCode(id: record.id)
            return payload
        }
        guard var user = try await store.read([.user(challenge.userID)], { $0.user(id: challenge.userID) }) else { throw AuthError.invalidChallenge }
        if case .number(let version) = payload["credential_version"] { user.credentialVersion = Int(version) }
        var checkCredentials = true
        if case .bool(let check) = payload["check_credentials"] { checkCredentials = check }
        return try await startSession(
            user, amr: challenge.amr + [factor, "mfa"], device: Self.device(payload), requireUnchangedCredentials: checkCredentials, kind: kind)
    }

    /// Uses up `challenge` (answered right) without starting a session: for the `/device` page,
    /// whose sign-in only approves another device.
    /// - Throws: 401 `INVALID_CHALLENGE` when it was used meanwhile.
    package func consumeChallenge(_ challenge: SignInChallenge) async throws {
        let key = challenge.key, now = clock.now()
        try await store.write([.code(purpose: Self.challengePurpose, key: key)]) { state in
            guard let record = state.code(purpose: Self.challengePurpose, key: key), record.expiresAt > now, record.attempts <= Self.challengeAttempts else {
                throw AuthError.invalidChallenge
            }
            state.deleteCode(id: record.id)
        }
    }

    private static func device(_ payload: [String: JSONValue]) -> DeviceInfo {
        var device = DeviceInfo.none
        device.name = string(payload["device_name"])
        device.platform = string(payload["platform"])
        return device
    }

    private static func string(_ value: JSONValue?) -> String? {
        if case .string(let s) = value { s } else { nil }
    }

    private static func strings(_ value: JSONValue?) -> [String] {
        guard case .array(let items) = value else { return [] }
        return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
    }
}
