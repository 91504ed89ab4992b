public import AuthKernel

extension AuthError {
    /// 401 `INVALID_INVITE`: no such invite code (or it was withdrawn from the configuration); a
    /// page words it in the person's language (`invite.invalid`).
    public static let invalidInvite = AuthError(
        status: .unauthorized, code: "INVALID_INVITE", message: "That invite code is not valid. Ask whoever invited you for a new one."
    ).worded("invite.invalid")
}
