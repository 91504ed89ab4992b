public import AuthKernel
import Hummingbird

extension AuthError {
    /// 400 `INVALID_PIN`: not 4 to 8 digits.
    public static let invalidPIN = AuthError(status: .badRequest, code: "INVALID_PIN", message: "A PIN is 4 to 8 digits.").worded("pin.error.invalid")
}
