package import AuthStorage
package import Foundation

/// A provider that checks an email and a password without starting a session: what the `/device`
/// page asks of the password provider, so the server knows it only by this.
package protocol PasswordVerifying: AuthProvider {
    /// The user whose verified email and password these are; failures are audited, and answered no
    /// sooner than the provider's refusal floor after `arrived`.
    func verifiedUser(email: String, password: String, device: DeviceInfo, arrived: Date?, _ context: AuthRequestContext) async throws -> UserRecord
}
