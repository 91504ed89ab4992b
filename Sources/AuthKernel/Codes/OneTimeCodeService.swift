public import AuthStorage
import Foundation

/// Issues and checks one-time codes: random digits, stored only as a keyed hash, with expiry,
/// single use, per-code attempt limit, per-key failure window and resend interval.
///
/// The hash is HMAC-SHA-256 under a server secret kept in `DATA/keys/`, so a copy of the store
/// alone cannot be brute-forced offline (a 6-digit code has only a million values).
public struct OneTimeCodeService: Sendable {
    let store: any AuthStore
    let secret: [UInt8]
    let clock: any AuthClock

    /// Creates the service.
    package init(store: any AuthStore, secret: [UInt8], clock: any AuthClock) {
        self.store = store
        self.secret = secret
        self.clock = clock
    }

    func digest(purpose: String, key: String, code: String) -> [UInt8] {
        SHA256.hmac(key: secret, message: Array("\(purpose)\u{0}\(key)\u{0}\(code)".utf8))
    }

    /// Creates a new code for `key`, replacing any earlier one, and returns it for delivery.
    /// - Parameters:
    ///   - purpose: what the code is for (your provider's name for it); codes of two purposes never mix.
    ///   - key: whom it is for within the purpose (an email, a hash of a challenge).
    ///   - policy: lifetime, resend interval and attempt limits.
    ///   - payload: data handed back by ``verify(purpose:key:code:policy:)``; nil keeps the earlier code's.
    /// - Throws: 429 with `retry_after` when the last code for this key was sent less than
    ///   `policy.resendInterval` seconds ago.
    public func issue(purpose: String, key: String, policy: CodePolicy, payload: [String: JSONValue]? = nil) async throws -> String {
        let code = SecureRandom.digits(policy.digits)
        let digest = Hex.encode(self.digest(purpose: purpose, key: key, code: code))
        let now = clock.now()
        try await store.write([.code(purpose: purpose, key: key)]) { state in
            let existing = state.code(purpose: purpose, key: key)
            if let existing {
                let nextAllowed = existing.sentAt.addingTimeInterval(TimeInterval(policy.resendInterval))
                if nextAllowed > now {
                    throw AuthError.rateLimited(
                        retryAfter: Int(nextAllowed.timeIntervalSince(now).rounded(.up)),
                        message: "A code was sent a moment ago. Wait before asking for another."
                    )
                }
            }
            let windowStart = now.addingTimeInterval(-TimeInterval(policy.failureWindow))
            state.put(
                CodeRecord(
                    purpose: purpose, key: key, digest: digest, sentAt: now,
                    expiresAt: now.addingTimeInterval(TimeInterval(policy.ttl)),
                    failures: (existing?.failures ?? []).filter { $0 > windowStart },
                    payload: payload ?? existing?.payload
                )
            )
        }
        return code
    }

    /// Like ``issue(purpose:key:policy:payload:)``, but the new code's payload is what `edit` makes of
    /// the earlier one's (nil when there is none or it expired), in the same write: two issues at
    /// once cannot lose each other's change.
    public func issue(
        purpose: String, key: String, policy: CodePolicy, editPayload edit: @Sendable ([String: JSONValue]?) -> [String: JSONValue]
    ) async throws -> String {
        let code = SecureRandom.digits(policy.digits)
        let digest = Hex.encode(self.digest(purpose: purpose, key: key, code: code))
        let now = clock.now()
        try await store.write([.code(purpose: purpose, key: key)]) { state in
            let existing = state.code(purpose: purpose, key: key)
            if let existing {
                let nextAllowed = existing.sentAt.addingTimeInterval(TimeInterval(policy.resendInterval))
                if nextAllowed > now {
                    throw AuthError.rateLimited(
                        retryAfter: Int(nextAllowed.timeIntervalSince(now).rounded(.up)),
                        message: "A code was sent a moment ago. Wait before asking for another."
                    )
                }
            }
            let windowStart = now.addingTimeInterval(-TimeInterval(policy.failureWindow))
            let live = existing.flatMap { $0.expiresAt > now ? $0.payload : nil }
            state.put(
                CodeRecord(
                    purpose: purpose, key: key, digest: digest, sentAt: now,
                    expiresAt: now.addingTimeInterval(TimeInterval(policy.ttl)),
                    failures: (existing?.failures ?? []).filter { $0 > windowStart },
                    payload: edit(live)
                )
            )
        }
        return code
    }

    /// A code that was right, not yet used up: ``consume(_:)`` uses it once the caller's own
    /// check (a password, say) has passed, or ``reject(_:policy:)`` counts that check's failure.
    public struct Checked: Sendable {
        /// Purpose of the code.
        public let purpose: String
        /// Key of the code.
        public let key: String
        /// The payload given when the code was issued (empty if none).
        public let payload: [String: JSONValue]
        let digest: String
    }

    /// Checks a code without using it up; a wrong one counts as in ``verify(purpose:key:code:policy:)``.
    /// - Throws: 401 `INVALID_CODE`; 429 after too many wrong tries in the failure window.
    public func check(purpose: String, key: String, code: String, policy: CodePolicy) async throws -> Checked {
        let presented = digest(purpose: purpose, key: key, code: code)
        let now = clock.now()
        let checked = try await store.write([.code(purpose: purpose, key: key)], durability: .eventual) { state -> Checked in
            var record = try Self.liveRecord(state, purpose: purpose, key: key, now: now, policy: policy)
            if ConstantTime.equals(presented, Hex.decode(record.digest) ?? []) {
                // A right code counts as a try until it is used up: checks racing each other get
                // no more than `maxAttempts` guesses at what the caller checks next.
                record.attempts += 1
                state.put(record)
                return Checked(purpose: purpose, key: key, payload: record.payload ?? [:], digest: record.digest)
            }
            Self.countFailure(&record, now: now, policy: policy)
            state.put(record)
            throw AuthError.invalidCode(attemptsRemaining: Self.remaining(record, policy: policy))
        }
        return checked
    }

    /// Uses up a code ``check(purpose:key:code:policy:)`` found right.
    /// - Throws: 401 `INVALID_CODE` when it was used, replaced or expired meanwhile.
    public func consume(_ checked: Checked) async throws {
        let now = clock.now()
        try await store.write([.code(purpose: checked.purpose, key: checked.key)]) { state in
            guard let record = state.code(purpose: checked.purpose, key: checked.key), record.digest == checked.digest,
                record.expiresAt > now
            else { throw AuthError.invalidCode(attemptsRemaining: 0) }
            state.deleteCode(id: record.id)
        }
    }

    /// Counts a failed check that came with a right code (the answer is 401 `INVALID_CODE` as for a
    /// wrong code, so it says nothing about which part was wrong).
    /// - Returns: the tries the code has left, for `INVALID_CODE`'s `attempts_remaining`.
    @discardableResult
    public func reject(_ checked: Checked, policy: CodePolicy) async throws -> Int {
        let now = clock.now()
        return try await store.write([.code(purpose: checked.purpose, key: checked.key)], durability: .eventual) { state -> Int in
            guard var record = state.code(purpose: checked.purpose, key: checked.key), record.digest == checked.digest else { return 0 }
            // The try was counted by the check; here it becomes a failure.
            let windowStart = now.addingTimeInterval(-TimeInterval(policy.failureWindow))
            record.failures = record.failures.filter { $0 > windowStart } + [now]
            if record.attempts >= policy.maxAttempts { record.digest = "" }
            state.put(record)
            return Self.remaining(record, policy: policy)
        }
    }

    /// Contract §5: the tries a code has left, 0 once it is dead. Codes exist for unknown accounts
    /// too (issued and mailed to no one), so the count says nothing about whether an account exists.
    private static func remaining(_ record: CodeRecord, policy: CodePolicy) -> Int {
        record.digest.isEmpty ? 0 : max(0, policy.maxAttempts - record.attempts)
    }

    /// The record a check may try, or the error its state calls for.
    private static func liveRecord(_ state: StoreState, purpose: String, key: String, now: Date, policy: CodePolicy) throws -> CodeRecord {
        guard let record = state.code(purpose: purpose, key: key) else { throw AuthError.invalidCode(attemptsRemaining: 0) }
        let windowStart = now.addingTimeInterval(-TimeInterval(policy.failureWindow))
        let recent = record.failures.filter { $0 > windowStart }
        if recent.count >= policy.maxFailures, let oldest = recent.min() {
            let wait = oldest.addingTimeInterval(TimeInterval(policy.failureWindow)).timeIntervalSince(now)
            throw AuthError.rateLimited(retryAfter: Int(wait.rounded(.up)), message: "Too many wrong codes. Wait before trying again.")
        }
        guard !record.digest.isEmpty, record.expiresAt > now, record.attempts < policy.maxAttempts else { throw AuthError.invalidCode(attemptsRemaining: 0) }
        return record
    }

    private static func countFailure(_ record: inout CodeRecord, now: Date, policy: CodePolicy) {
        let windowStart = now.addingTimeInterval(-TimeInterval(policy.failureWindow))
        record.attempts += 1
        record.failures = record.failures.filter { $0 > windowStart } + [now]
        if record.attempts >= policy.maxAttempts { record.digest = "" }  // dead: no further try can succeed
    }

    /// Checks a code and uses it up on success.
    /// - Returns: the payload given when the code was issued (empty if none).
    /// - Throws: 401 `INVALID_CODE` when it is wrong, expired, used or dead after too many tries;
    ///   429 when the key has had too many wrong tries within the failure window.
    @discardableResult
    public func verify(purpose: String, key: String, code: String, policy: CodePolicy) async throws -> [String: JSONValue] {
        let presented = digest(purpose: purpose, key: key, code: code)
        let now = clock.now()
        // A wrong try is counted in memory at once and answered without waiting for the disk (see
        // `WriteDurability.eventual`); a right one waits until its use is durable.
        let payload = try await store.write([.code(purpose: purpose, key: key)], durability: .eventual) { state -> [String: JSONValue] in
            guard var record = state.code(purpose: purpose, key: key) else { throw AuthError.invalidCode(attemptsRemaining: 0) }
            let windowStart = now.addingTimeInterval(-TimeInterval(policy.failureWindow))
            let recent = record.failures.filter { $0 > windowStart }
            if recent.count >= policy.maxFailures, let oldest = recent.min() {
                let wait = oldest.addingTimeInterval(TimeInterval(policy.failureWindow)).timeIntervalSince(now)
                throw AuthError.rateLimited(retryAfter: Int(wait.rounded(.up)), message: "Too many wrong codes. Wait before trying again.")
            }
            guard !record.digest.isEmpty, record.expiresAt > now, record.attempts < policy.maxAttempts else {
                throw AuthError.invalidCode(attemptsRemaining: 0)
            }
            let expected = Hex.decode(record.digest) ?? []
            if ConstantTime.equals(presented, expected) {
                state.deleteCode(id: record.id)
                return record.payload ?? [:]
            }
            record.attempts += 1
            record.failures = recent + [now]
            if record.attempts >= policy.maxAttempts { record.digest = "" }  // dead: no further try can succeed
            state.put(record)
            throw AuthError.invalidCode(attemptsRemaining: Self.remaining(record, policy: policy))
        }
        try await store.waitUntilDurable()
        return payload
    }

    /// Ends the pending code of `key` for `purpose`, if there is one: what a provider does when the
    /// sign-in the code was for happened another way (the link mailed with it was opened). Its
    /// failures stay counted in their window.
    public func revoke(purpose: String, key: String) async throws {
        try await store.write([.code(purpose: purpose, key: key)]) { state in
            guard var record = state.code(purpose: purpose, key: key), !record.digest.isEmpty else { return }
            record.digest = ""
            state.put(record)
        }
    }

    /// The payload of an unexpired code, without using the code.
    public func pendingPayload(purpose: String, key: String) async throws -> [String: JSONValue]? {
        let now = clock.now()
        return try await store.read([.code(purpose: purpose, key: key)]) { state in
            guard let record = state.code(purpose: purpose, key: key), record.expiresAt > now else { return nil }
            return record.payload
        }
    }

    /// Deletes codes that have expired and whose failures have left every window.
    /// - Parameter retention: how long failures are remembered after the code expired, seconds.
    @discardableResult
    package func purgeExpired(retention: Int = 86_400) async throws -> Int {
        let now = clock.now()
        let cutoff = now.addingTimeInterval(-TimeInterval(retention))
        return try await store.write([.codesExpired(before: now)]) { state in
            let dead = state.codes.values.filter { $0.expiresAt <= now && ($0.failures.max() ?? .distantPast) < cutoff }
            for record in dead { state.deleteCode(id: record.id) }
            return dead.count
        }
    }
}
