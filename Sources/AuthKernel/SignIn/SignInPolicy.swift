public import AuthStorage

/// A sign-in about to start a session, as ``SignInPolicy`` sees it: the first factor has been
/// checked by its provider, nothing is issued yet.
public struct SignInAttempt: Sendable {
    /// The user, as stored now.
    public let user: UserRecord
    /// The factors used so far (the provider's id, e.g. `["password"]`).
    public let amr: [String]
    /// The labels the client sent.
    public let device: DeviceInfo
    /// The client's address (the peer, or what a trusted proxy forwarded), when known.
    public let clientIP: String?

    /// Creates an attempt (the kernel does, before each sign-in).
    package init(user: UserRecord, amr: [String], device: DeviceInfo, clientIP: String?) {
        self.user = user
        self.amr = amr
        self.device = device
        self.clientIP = clientIP
    }
}

/// What a ``SignInPolicy`` decides about a ``SignInAttempt``.
public enum SignInDecision: Sendable, Equatable {
    /// Let it go on (to the next policy, then a session).
    case allow
    /// Refuse it with this error (e.g. 403 `ACCOUNT_DISABLED`); no session starts.
    case refuse(AuthError)
    /// Answer the contract's 202 `second_factor_required` challenge instead of a session, offering
    /// these factors (names of registered ``SecondFactor``s); the session starts once one is answered.
    case requireSecondFactor([String])
}

/// Takes part in every sign-in, whichever provider checked the first factor: may refuse it, demand
/// a second factor, or add claims to the access tokens. Register with
/// ``SignInHooks/register(_:)-(SignInPolicy)``; the first-factor provider does not know which policies exist.
///
/// ```swift
/// struct WorkHoursOnly: SignInPolicy {
///     func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
///         isWorkHours() ? .allow : .refuse(AuthError(status: .forbidden, code: "OUTSIDE_WORK_HOURS", message: "Come back at 9."))
///     }
/// }
/// ```
public protocol SignInPolicy: Sendable {
    /// Decides on a sign-in before its session starts (default: allow).
    func decide(_ attempt: SignInAttempt) async throws -> SignInDecision

    /// Claims to add to every access token of `session` (at sign-in and at each refresh, so a
    /// change shows in the next token); default none. Claims the kernel sets itself (`sub`, `amr`,
    /// `exp`, …) are never replaced.
    func claims(for user: UserRecord, session: SessionRecord) -> [String: JSONValue]
}

extension SignInPolicy {
    /// Allows.
    public func decide(_ attempt: SignInAttempt) async throws -> SignInDecision { .allow }

    /// No claims.
    public func claims(for user: UserRecord, session: SessionRecord) -> [String: JSONValue] { [:] }
}
