public import AuthStorage
public import Foundation

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

    /// Whether a challenge for `user` offers this factor now; default ``isAvailable(for:)``. For a
    /// factor that depends on more than the user's record (another signed-in device of theirs).
    func isOffered(to user: UserRecord) async throws -> Bool

    /// Called before an answer takes one of the user's wrong-answer slots: throw when it cannot be
    /// judged yet (400 `PENDING` while another device has not answered), and neither the challenge
    /// nor a slot is spent. Default nothing.
    func checkReady(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws

    /// Called when a challenge offering this factor is issued (e.g. to mail a code); default nothing.
    func challengeStarted(_ challenge: SignInChallenge, for user: UserRecord) async throws

    /// Whether `answer` (the field's JSON value) is right for `user`. Count and limit wrong answers
    /// as the factor needs; the kernel also kills a challenge after 5 wrong answers.
    func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool

    /// The field of `/mfa/verify` that carries the answer, when it is not ``name`` (a passkey's
    /// assertion comes as `credential`).
    var answerField: String { get }

    /// Fields this factor adds to the 202 answer of a challenge that offers it (a passkey's
    /// `passkey_options`); default none. Called after ``challengeStarted(_:for:)``.
    func challengeFields(_ challenge: SignInChallenge, for user: UserRecord) async throws -> [String: JSONValue]

    /// What `user` has enrolled of this factor, for `GET /api/v1/auth/mfa` (default nothing): a
    /// user with any enrollment is one with a second factor.
    func enrollments(for user: UserRecord) -> [SecondFactorEnrollment]

    /// Removes everything `user` has enrolled of this factor (default nothing): when the owner of
    /// an address takes back an account someone else made on it without proving it.
    func removeAll(from user: inout UserRecord)
}

extension SecondFactor {
    /// Available to everyone.
    public func isAvailable(for user: UserRecord) -> Bool { true }

    /// ``isAvailable(for:)``.
    public func isOffered(to user: UserRecord) async throws -> Bool { isAvailable(for: user) }

    /// Always ready.
    public func checkReady(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws {}

    /// Nothing to do.
    public func challengeStarted(_ challenge: SignInChallenge, for user: UserRecord) async throws {}

    /// The factor's name.
    public var answerField: String { name }

    /// No fields.
    public func challengeFields(_ challenge: SignInChallenge, for user: UserRecord) async throws -> [String: JSONValue] { [:] }

    /// Nothing enrolled.
    public func enrollments(for user: UserRecord) -> [SecondFactorEnrollment] { [] }

    /// Nothing to remove.
    public func removeAll(from user: inout UserRecord) {}
}

/// One second factor a user has set up, as `GET /api/v1/auth/mfa` lists it.
public struct SecondFactorEnrollment: Sendable, Equatable {
    /// The factor's type (`totp`, `passkey`, `recovery_code`).
    public var type: String
    /// When it was set up.
    public var createdAt: Date
    /// For a set of single-use codes: how many are left (the answer's `recovery_codes_left`, not a
    /// factor of its own in `factors`).
    public var remaining: Int?
    /// The name the user gave it (a passkey's), for mail that lists what can still sign in.
    public var name: String?

    /// Creates an enrollment.
    public init(type: String, createdAt: Date, remaining: Int? = nil, name: String? = nil) {
        self.type = type
        self.createdAt = createdAt
        self.remaining = remaining
        self.name = name
    }
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

    /// A key to file what a factor keeps for this challenge under (a mailed code, a WebAuthn
    /// challenge): the hex SHA-256 of the token, which is a bearer secret and is stored nowhere.
    public var key: String { Self.key(token: token) }

    static func key(token: String) -> String { Hex.encode(SHA256.hash(token)) }
}
