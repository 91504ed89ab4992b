import AuthKernel
public import Foundation

/// A user's PIN as stored in `secrets["pin"]`, with its failure counter and lock.
///
/// The hash is `HMAC-SHA-256(pepper, salt || pin)`: a random 16-byte salt per user and a 32-byte
/// pepper in `DATA/keys/pin-pepper.key`, never in the store, so a copy of the store alone cannot be
/// brute-forced offline. Records imported from a legacy app carry `legacy_salt` and
/// `hash = sha256_hex(legacy_salt + pin)` instead; they verify, and are re-hashed on the first success.
public struct PINCredential: Codable, Sendable, Equatable {
    /// Hex of the 16-byte per-user salt; absent on legacy records.
    public var salt: String?
    /// Hex of the keyed hash (or of the legacy SHA-256).
    public var hash: String
    /// The global salt string of an imported legacy record.
    public var legacySalt: String?
    /// Consecutive wrong PINs since the last success or lockout.
    public var failures: Int
    /// End of the current lock (Unix seconds), if locked.
    public var lockedUntil: Double?
    /// Lockouts so far; each doubles the next one. Reset by a success.
    public var lockouts: Int

    enum CodingKeys: String, CodingKey {
        case salt, hash, legacySalt = "legacy_salt", failures, lockedUntil = "locked_until", lockouts
    }

    /// A fresh credential for `pin`.
    public init(pin: String, pepper: [UInt8]) {
        let salt = SecureRandom.bytes(16)
        self.salt = Hex.encode(salt)
        self.hash = Hex.encode(Self.keyedHash(pin: pin, salt: salt, pepper: pepper))
        self.legacySalt = nil
        self.failures = 0
        self.lockedUntil = nil
        self.lockouts = 0
    }

    /// An imported legacy record: `hash` is `sha256_hex(legacySalt + pin)`.
    public init(legacySalt: String, hash: String) {
        self.salt = nil
        self.hash = hash.lowercased()
        self.legacySalt = legacySalt
        self.failures = 0
        self.lockedUntil = nil
        self.lockouts = 0
    }

    static func keyedHash(pin: String, salt: [UInt8], pepper: [UInt8]) -> [UInt8] {
        SHA256.hmac(key: pepper, message: salt + Array(pin.utf8))
    }

    /// Whether `pin` is this PIN; constant-time.
    public func matches(_ pin: String, pepper: [UInt8]) -> Bool {
        guard let expected = Hex.decode(hash) else { return false }
        if let legacySalt {
            return ConstantTime.equals(SHA256.hash(legacySalt + pin), expected)
        }
        guard let salt = salt.flatMap(Hex.decode) else { return false }
        return ConstantTime.equals(Self.keyedHash(pin: pin, salt: salt, pepper: pepper), expected)
    }

    /// Whether the record is an imported legacy hash that should be re-hashed.
    public var isLegacy: Bool { legacySalt != nil }

    /// Seconds until the lock ends, or nil when not locked at `now`.
    public func lockRemaining(now: Date) -> Int? {
        guard let until = lockedUntil, until > now.timeIntervalSince1970 else { return nil }
        return max(1, Int((until - now.timeIntervalSince1970).rounded(.up)))
    }

    /// Counts a wrong PIN; after `settings.maxAttempts` in a row, locks for `lockout × 2^lockouts` seconds.
    /// - Returns: the lock's length in seconds when this failure started one.
    public mutating func recordFailure(now: Date, settings: PINSettings) -> Int? {
        failures += 1
        guard failures >= settings.maxAttempts else { return nil }
        let seconds = min(PINSettings.maxLockout, settings.lockout << min(lockouts, 20))
        lockedUntil = now.timeIntervalSince1970 + Double(seconds)
        lockouts += 1
        failures = 0
        return seconds
    }

    /// Clears the counter and lock after a success.
    public mutating func recordSuccess() {
        failures = 0
        lockouts = 0
        lockedUntil = nil
    }
}
