import AuthKernel
import Foundation

/// What the user's record keeps of their authenticator app, under the secret key `totp`: the shared
/// secret sealed with the server's `totp` key (a copy of the user records alone cannot make codes)
/// and the last step used (a code is accepted once).
struct TOTPEnrollment: Codable, Sendable, Equatable {
    /// The secret, sealed (``SecretBox``).
    var sealedSecret: String
    /// Unix seconds of enrolment (or of confirmation, once confirmed).
    var createdAt: Double
    /// False until the first code confirmed that the app has the secret.
    var confirmed: Bool
    /// The last step whose code was accepted.
    var lastStep: Int64?
    /// While pending: the session that enrolled (only it may confirm) and the wrong first codes so far.
    var sessionID: String?
    var attempts: Int?

    static let key = "totp"
    /// Seconds an unconfirmed enrolment waits for its first code.
    static let pendingLifetime = 600.0

    enum CodingKeys: String, CodingKey {
        case sealedSecret = "sealed_secret", createdAt = "created_at", confirmed, lastStep = "last_step", sessionID = "session_id", attempts
    }
}

/// Wrong TOTP codes in a row, and the lock they lead to, under the secret key `totp.lock`: kept in
/// the user's record, so a restart does not lift it. Recovery codes are not locked (50 random bits
/// each; the kernel's per-user budget of wrong second factors bounds guessing), so someone who
/// knows the password cannot keep the owner out by locking the app's codes.
struct FactorLock: Codable, Sendable, Equatable {
    var failures = 0
    /// Unix seconds until which every code is refused.
    var lockedUntil: Double?

    static let key = "totp.lock"

    enum CodingKeys: String, CodingKey { case failures, lockedUntil = "locked_until" }

    /// Seconds left of the lock, or nil.
    func remaining(now: Date) -> Int? {
        guard let until = lockedUntil, until > now.timeIntervalSince1970 else { return nil }
        return max(1, Int((until - now.timeIntervalSince1970).rounded(.up)))
    }

    /// Counts a wrong code; returns the lock's length when this one started it.
    mutating func recordFailure(now: Date, settings: TOTPSettings) -> Int? {
        failures += 1
        guard failures >= settings.maxAttempts else { return nil }
        failures = 0
        lockedUntil = now.timeIntervalSince1970 + Double(settings.lockout)
        return settings.lockout
    }
}

/// The ten single-use recovery codes, under the secret key `recovery_codes`: each kept only as an
/// HMAC (with a server pepper) of a random salt and the code.
struct RecoveryCodes: Codable, Sendable, Equatable {
    /// `salt$hex` per unused code.
    var hashes: [String]
    /// Unix seconds the set was made.
    var createdAt: Double

    static let key = "recovery_codes"
    static let count = 10
    /// Ten characters of base32 (50 bits), shown as `XXXXX-XXXXX`.
    static let length = 10

    enum CodingKeys: String, CodingKey { case hashes, createdAt = "created_at" }

    /// A new set: the codes to show once, and what to store.
    static func generate(pepper: [UInt8], now: Date) -> (codes: [String], stored: RecoveryCodes) {
        var codes: [String] = []
        var hashes: [String] = []
        for _ in 0..<count {
            let raw = Base32.encode(SecureRandom.bytes(7)).prefix(length)
            let code = raw.prefix(5) + "-" + raw.suffix(5)
            codes.append(String(code))
            hashes.append(hash(String(raw), pepper: pepper, salt: Hex.encode(SecureRandom.bytes(16))))
        }
        return (codes, RecoveryCodes(hashes: hashes, createdAt: now.timeIntervalSince1970))
    }

    /// A code as typed, without spaces and dashes, in capitals; nil when it cannot be one.
    static func normalise(_ text: String) -> String? {
        guard text.utf8.count <= 32 else { return nil }
        let kept = text.uppercased().filter { $0 != "-" && $0 != " " }
        guard kept.count == length, kept.utf8.allSatisfy({ Base32.alphabet.contains($0) }) else { return nil }
        return kept
    }

    static func hash(_ normalised: String, pepper: [UInt8], salt: String) -> String {
        salt + "$" + Hex.encode(SHA256.hmac(key: pepper, message: Array((salt + normalised).utf8)))
    }

    /// Removes the code `text` names and says whether there was one; every stored code is compared.
    mutating func use(_ text: String, pepper: [UInt8]) -> Bool {
        guard let code = Self.normalise(text) else { return false }
        var found: Int?
        for (i, stored) in hashes.enumerated() {
            guard let dollar = stored.firstIndex(of: "$") else { continue }
            let candidate = Self.hash(code, pepper: pepper, salt: String(stored[..<dollar]))
            if ConstantTime.equals(Array(candidate.utf8), Array(stored.utf8)), found == nil { found = i }
        }
        guard let found else { return false }
        hashes.remove(at: found)
        return true
    }
}
