public import AuthKernel
import Hummingbird

extension AuthError {
    /// 401 `INVALID_APPLE_TOKEN`: the response never says which check failed (the log does).
    public static let invalidAppleToken = AuthError(
        status: .unauthorized, code: "INVALID_APPLE_TOKEN", message: "The Apple sign-in could not be verified. Try again.")
}
