public import AuthStorage

/// A second factor that a ``SignInPolicy`` can demand (contract §10): TOTP, a recovery code, an
/// emailed code, a passkey, or one of your own. Register with ``SignInHooks/register(_:)-(SecondFactor)``.
///
/// `POST /api/v1/auth/mfa/verify` with `{"challenge": "…", "<name>": <answer>}` finds the factor by
/// the field its ``name`` names and asks it to ``verify(_:for:challenge:)`` the answer.
public protocol SecondFactor: Sendable {
    /// Its name in a challenge's `factors` and the field of `/mfa/verify` that carries its answer
    /// (`totp`, `recovery_code`); also the name the session's `amr` gets.
    var name: String { get }

    /// Whether `user` can use this factor now (enrolled); a challenge offers only those that can.
    func isAvailable(for user: UserRecord) -> Bool

    /// Called when a challenge offering this factor is issued (e.g. to mail a code); default nothing.
    func challengeStarted(_ challenge: SignInChallenge, for user: UserRecord) async throws

    /// Whether `answer` (the field's JSON value) is right for `user`. Count and limit wrong answers
    /// as the factor needs; the kernel also kills a challenge after 5 wrong answers.
    func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool
}

extension SecondFactor {
    /// Available to everyone.
    public func isAvailable(for user: UserRecord) -> Bool { true }

    /// Nothing to do.
    public func challengeStarted(_ challenge: SignInChallenge, for user: UserRecord) async throws {}
}

/// A sign-in waiting for its second factor.
public struct SignInChallenge: Sendable {
    /// The opaque token the client sends back (256 random bits); only its hash is stored.
    public let token: String
    /// The user signing in.
    public let userID: UUID
    /// The factors used so far.
    public let amr: [String]
    /// The factors offered.
    public let factors: [String]
    /// When it stops working.
    public let expiresAt: Date
    /// The labels the signing-in client sent.
    public let device: DeviceInfo
    /// The address the sign-in came from (the peer, or what a trusted proxy forwarded), when known.
    public let clientIP: String?
}

public import Foundation
