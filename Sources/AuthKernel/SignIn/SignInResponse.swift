public import AuthStorage
public import Hummingbird

/// The answer to a sign-in: the session (200), or the challenge for a second factor (202), as the
/// registered ``SignInPolicy``s decided. A provider's sign-in route returns it as it is.
public enum SignInResponse: ResponseGenerator, Sendable {
    /// Signed in: `200` with the contract's session response.
    case session(SessionResponse)
    /// A second factor is needed: `202 {"status":"second_factor_required","challenge","factors","expires_in"}`.
    case secondFactorRequired(SecondFactorRequired)

    /// The session, when signed in.
    public var session: SessionResponse? {
        if case .session(let s) = self { return s }
        return nil
    }

    /// The HTTP response for it.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        switch self {
        case .session(let session): try session.response(from: request, context: context)
        case .secondFactorRequired(let challenge): try challenge.response(from: request, context: context)
        }
    }
}

/// The contract's 202 answer when a sign-in needs a second factor (§10).
public struct SecondFactorRequired: Sendable, Equatable {
    /// The token to send back to `POST /api/v1/auth/mfa/verify`.
    public var challenge: String
    /// The factors offered.
    public var factors: [String]
    /// Seconds the challenge lives.
    public var expiresIn: Int
    /// Extra fields a factor adds to the answer (e.g. `passkey_options`).
    public var extra: [String: JSONValue] = [:]

    /// Creates the answer.
    public init(challenge: String, factors: [String], expiresIn: Int, extra: [String: JSONValue] = [:]) {
        self.challenge = challenge
        self.factors = factors
        self.expiresIn = expiresIn
        self.extra = extra
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var object: [String: JSONValue] = extra
        object["status"] = .string("second_factor_required")
        object["challenge"] = .string(challenge)
        object["factors"] = .array(factors.map(JSONValue.string))
        object["expires_in"] = .number(Double(expiresIn))
        var w = JSONWriter(capacity: 256)
        w.value(.object(object))
        return w.response(status: .accepted)
    }
}
