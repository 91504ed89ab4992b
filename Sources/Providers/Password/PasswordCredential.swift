import AuthKernel
import Foundation

/// A user's password as stored in `secrets["password"]`: the Argon2id PHC string and the lockout state.
struct PasswordCredential: Codable, Sendable, Equatable {
    /// `$argon2id$v=19$m=…,t=…,p=1$salt$hash`; any Argon2 library verifies it.
    var hash: String
    /// Consecutive wrong passwords.
    var failures: Int = 0
    /// End of the current lock (Unix seconds).
    var lockedUntil: Double?
    /// When the password was last set (Unix seconds).
    var changedAt: Double

    enum CodingKeys: String, CodingKey { case hash, failures, lockedUntil = "locked_until", changedAt = "changed_at" }

    init(hash: String, now: Date) {
        self.hash = hash
        self.changedAt = now.timeIntervalSince1970
    }

    /// Marks a hash brought over from another system (contract §11): checked with
    /// ``ImportedPasswordHash`` at the first sign-in, then replaced by Argon2id.
    static let importedPrefix = "import$"

    /// The other system's hash, when this credential was imported and not yet replaced.
    var importedHash: String? { hash.hasPrefix(Self.importedPrefix) ? String(hash.dropFirst(Self.importedPrefix.count)) : nil }

    func lockRemaining(now: Date) -> Int? {
        guard let until = lockedUntil, until > now.timeIntervalSince1970 else { return nil }
        return max(1, Int((until - now.timeIntervalSince1970).rounded(.up)))
    }

    /// Counts a wrong password; returns the lock length when this one starts a lock.
    mutating func recordFailure(now: Date, settings: PasswordSettings) -> Int? {
        failures += 1
        guard failures >= settings.lockoutAfter else { return nil }
        failures = 0
        lockedUntil = now.timeIntervalSince1970 + Double(settings.lockout)
        return settings.lockout
    }
}
