public import AuthKernel
import Hummingbird

extension AuthError {
    /// 400 `WEAK_PASSWORD` with `details.reason` naming the rule that failed: `too_short`,
    /// `too_long`, `matches_email` or `too_common`.
    public static func weakPassword(reason: String, message: String) -> AuthError {
        AuthError(status: .badRequest, code: "WEAK_PASSWORD", message: message, details: ["reason": .string(reason)])
    }
    /// 403 `EMAIL_NOT_VERIFIED`: the account's email is not confirmed yet (the code is mailed again).
    public static let emailNotVerified = AuthError(
        status: .forbidden, code: "EMAIL_NOT_VERIFIED", message: "Confirm your email address first: we sent a code to it."
    ).worded("password.error.email_not_verified")
    /// 409 `ACCOUNT_EXISTS`: registering an email that has an account.
    public static let accountExists = AuthError(status: .conflict, code: "ACCOUNT_EXISTS", message: "An account with this email already exists.")
        .worded("password.error.account_exists")
}
