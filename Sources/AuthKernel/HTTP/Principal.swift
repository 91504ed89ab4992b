public import AuthStorage
/// Who made a request: the user and the live session behind a verified access token.
public struct Principal: Sendable {
    /// The user, as stored when the request arrived.
    public var user: UserRecord
    /// The session named by the token's `sid`.
    public var session: SessionRecord
    /// The verified claims.
    package var claims: AccessTokenClaims
}
