public import AuthKernel
import Foundation

/// What a new password must be: long enough (code points after NFKC), not too long, not the
/// account's email, not on the list of the most common passwords. No composition rules.
public struct PasswordPolicy: Sendable {
    /// Minimum length in code points.
    public let minLength: Int

    /// Creates the policy.
    public init(minLength: Int) { self.minLength = minLength }

    /// The NFKC form that is hashed and compared, so the same password typed on two keyboards matches.
    public static func normalize(_ password: String) -> String {
        password.precomposedStringWithCompatibilityMapping
    }

    /// Returns the normalised password or throws 400 `WEAK_PASSWORD` with `details.reason`:
    /// `too_short`, `too_long`, `matches_email` or `too_common`.
    public func check(_ password: String, email: String?) throws(AuthError) -> String {
        // Far past any length that could pass, before NFKC spends time on up to 64 KiB.
        if password.unicodeScalars.count > PasswordSettings.maxLength * 4 {
            throw Self.weak("too_long", "Use at most \(PasswordSettings.maxLength) characters.", ["max": String(PasswordSettings.maxLength)])
        }
        let normalized = Self.normalize(password)
        let length = normalized.unicodeScalars.count
        if length < minLength {
            throw Self.weak("too_short", "Use at least \(minLength) characters.", ["min": String(minLength)])
        }
        if length > PasswordSettings.maxLength {
            throw Self.weak("too_long", "Use at most \(PasswordSettings.maxLength) characters.", ["max": String(PasswordSettings.maxLength)])
        }
        let folded = normalized.lowercased()
        if let email, folded == email.lowercased() || folded == email.split(separator: "@").first?.lowercased() {
            throw Self.weak("matches_email", "Do not use your email address as your password.")
        }
        if CommonPasswords.all.contains(folded) {
            throw Self.weak("too_common", "This password is one of the most common ones. Choose another.")
        }
        return normalized
    }

    /// The rule's error, worded on pages by the catalog's `password.rule.REASON`.
    static func weak(_ reason: String, _ message: String, _ values: [String: String] = [:]) -> AuthError {
        AuthError.weakPassword(reason: reason, message: message).worded("password.rule." + reason, values)
    }
}
