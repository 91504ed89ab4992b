public import AuthKernel
import HTTPTypes

extension AuthError {
    /// 401 `INVALID_ID_TOKEN`: the identity provider's token is forged, expired, for another
    /// audience, already used, or its nonce does not match (contract §16).
    public static let invalidIDToken = AuthError(
        status: .unauthorized, code: "INVALID_ID_TOKEN", message: "The identity provider's token is not valid here. Sign in with it again.")
}
