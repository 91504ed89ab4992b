public import AuthStorage
public import Foundation

/// What a provider's form handler decided.
public enum PageOutcome: Sendable {
    /// Show this step next (the code form after the address, or the same form with an error).
    case step(PageStep)
    /// The first factor is right: the server runs the sign-in policies and asks the second factors
    /// they demand, then signs the browser in and returns to where the person was going.
    /// `multiFactor`: the method was two factors at once (a passkey with user verification), so no
    /// policy asks for another. `vouchedAt`: another of the user's sessions vouched for this
    /// sign-in (approved it); a session started without a further factor carries that session's
    /// `auth_time` instead of now.
    case signedIn(UserRecord, amr: [String], device: DeviceInfo, multiFactor: Bool = false, vouchedAt: Date? = nil)
    /// Send the browser to `location`: an identity provider's authorization endpoint (the
    /// pending state is kept for its way back), or a path of authd's own (`/account`).
    case redirect(to: String)
}
