import AuthStorage
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

extension SessionResponse {
    /// The answer, written without `JSONEncoder` (see `JSONWriter`); the same JSON as the `Codable` form.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var w = JSONWriter(capacity: 768)
        w.beginObject()
        w.key("access_token"); w.string(accessToken)
        w.key("refresh_token"); w.string(refreshToken)
        w.key("token_type"); w.string(tokenType)
        w.key("expires_in"); w.int(expiresIn)
        w.key("user"); user.write(to: &w)
        w.endObject()
        return w.response()
    }
}

