public import AuthStorage
public import Foundation

/// A provider that checks an email and a password without starting a session: what the server's
/// own pages (the `/device` page) ask of a password provider, which they know only by this.
public protocol PasswordVerifying: AuthProvider {
    /// The user whose verified email and password these are.
    ///
    /// Failures are audited as the provider's sign-in failures are, and answered no sooner than the
    /// provider's refusal floor after `arrived` (now when nil).
    /// - Throws: ``AuthError``: 400 `INVALID_EMAIL`, 401 `INVALID_CREDENTIALS`, 403 `EMAIL_NOT_VERIFIED`, 429.
    func verifiedUser(email: String, password: String, device: DeviceInfo, arrived: Date?, _ context: AuthRequestContext) async throws -> UserRecord
}
