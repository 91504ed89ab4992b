public import Hummingbird

/// The answer to every successful sign-in and refresh (contract §2).
public struct SessionResponse: ResponseCodable, Sendable {
    /// Signed EdDSA JWT.
    public var accessToken: String
    /// Opaque single-use refresh token.
    public var refreshToken: String
    /// Always `Bearer`.
    public var tokenType = "Bearer"
    /// Access token lifetime, seconds.
    public var expiresIn: Int
    /// The signed-in user.
    public var user: UserResponse

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", refreshToken = "refresh_token", tokenType = "token_type", expiresIn = "expires_in", user
    }
}
