public import Foundation

/// A sign-in waiting for its second factor (contract §10): what a sign-in call throws as
/// ``AuthClientError/secondFactorRequired(_:)`` instead of returning the session.
public struct SecondFactorChallenge: Sendable, Equatable {
    /// The token to send back with the answer.
    public var challenge: String
    /// The factors offered: `totp`, `recovery_code`, `email_code`, `passkey`, and `approval` (the
    /// user's other signed-in device: ``AuthClient/requestSecondFactorApproval(_:)``).
    public var factors: [String]
    /// Seconds the challenge lives.
    public var expiresIn: Int
    /// With `passkey` offered: WebAuthn request options (JSON) for the platform's passkey API.
    public var passkeyOptions: Data?

    init?(json data: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["status"] as? String == "second_factor_required",
            let challenge = object["challenge"] as? String, let factors = object["factors"] as? [String]
        else { return nil }
        self.challenge = challenge
        self.factors = factors
        self.expiresIn = object["expires_in"] as? Int ?? 300
        self.passkeyOptions = (object["passkey_options"]).flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }
    }
}

/// The answer to a ``SecondFactorChallenge``.
public enum SecondFactorAnswer: Sendable, Equatable {
    /// A code from the authenticator app.
    case totp(String)
    /// One of the ten recovery codes.
    case recoveryCode(String)
    /// The code mailed for this sign-in.
    case emailCode(String)
    /// A passkey assertion: the AuthenticationResponseJSON the platform returned for ``SecondFactorChallenge/passkeyOptions``.
    case passkey(Data)
}

/// A TOTP enrolment: show `otpauthURI` as a QR code (or `secret` to type), then confirm with a code.
public struct TOTPEnrollment: Codable, Sendable, Equatable {
    /// The shared secret, base32.
    public var secret: String
    /// The `otpauth://totp/…` URI authenticator apps read.
    public var otpauthURI: String
    enum CodingKeys: String, CodingKey { case secret, otpauthURI = "otpauth_uri" }
}

/// What the user has set up as second factors (`GET /api/v1/auth/mfa`).
public struct SecondFactors: Codable, Sendable, Equatable {
    /// One set-up factor.
    public struct Factor: Codable, Sendable, Equatable {
        /// `totp` or `passkey`.
        public var type: String
        /// When it was set up.
        public var createdAt: String
        enum CodingKeys: String, CodingKey { case type, createdAt = "created_at" }
    }
    /// The factors, oldest first.
    public var factors: [Factor]
    /// Unused recovery codes.
    public var recoveryCodesLeft: Int
    enum CodingKeys: String, CodingKey { case factors, recoveryCodesLeft = "recovery_codes_left" }
}

/// A registered passkey.
public struct Passkey: Codable, Sendable, Equatable {
    /// The credential id, base64url.
    public var id: String
    /// Its name.
    public var name: String
    /// When it was added.
    public var createdAt: String
    /// When it last signed in.
    public var lastUsedAt: String?
    /// Whether it is synced to the user's other devices.
    public var backedUp: Bool
    enum CodingKeys: String, CodingKey { case id, name, createdAt = "created_at", lastUsedAt = "last_used_at", backedUp = "backed_up" }
}

extension AuthClient {
    // MARK: The challenge

    /// Finishes a sign-in that threw ``AuthClientError/secondFactorRequired(_:)``; saves and returns the session.
    /// - Throws: ``AuthClientError/invalidCode(attemptsRemaining:)`` for a wrong answer,
    ///   ``AuthClientError/invalidChallenge`` once the challenge is used, expired or dead.
    @discardableResult
    public func completeSignIn(_ challenge: SecondFactorChallenge, with answer: SecondFactorAnswer) async throws -> AuthSession {
        var body: [String: Any] = ["challenge": challenge.challenge]
        switch answer {
        case .totp(let code): body["totp"] = code
        case .recoveryCode(let code): body["recovery_code"] = code
        case .emailCode(let code): body["email_code"] = code
        case .passkey(let credential): body["credential"] = try Self.jsonObject(credential)
        }
        return try await signedIn(call("POST", "api/v1/auth/mfa/verify", json: body, as: SessionResponse.self))
    }

    /// Mails (again) the code of a challenge that offers `email_code`.
    public func mailSignInCode(_ challenge: SecondFactorChallenge) async throws {
        _ = try await call("POST", "api/v1/auth/mfa/email-code", json: ["challenge": challenge.challenge], as: Empty.self)
    }

    // MARK: TOTP and recovery codes

    /// What the user has set up.
    public func secondFactors() async throws -> SecondFactors {
        try await authorized("GET", "api/v1/auth/mfa", as: SecondFactors.self)
    }

    /// Starts a TOTP enrolment (needs a recent sign-in: ``AuthClientError/reauthRequired`` otherwise).
    public func enrollTOTP() async throws -> TOTPEnrollment {
        try await authorized("POST", "api/v1/auth/mfa/totp/enroll", as: TOTPEnrollment.self)
    }

    /// Turns TOTP on with the app's first code; returns the ten recovery codes to show once.
    public func confirmTOTP(code: String) async throws -> [String] {
        try await authorized("POST", "api/v1/auth/mfa/totp/confirm", json: ["code": code], as: RecoveryCodes.self).recoveryCodes
    }

    /// Turns TOTP off, with the recovery codes.
    public func disableTOTP() async throws {
        _ = try await authorized("DELETE", "api/v1/auth/mfa/totp", as: Empty.self)
    }

    /// A new set of recovery codes; the old ones stop working.
    public func newRecoveryCodes() async throws -> [String] {
        try await authorized("POST", "api/v1/auth/mfa/recovery-codes", as: RecoveryCodes.self).recoveryCodes
    }

    struct RecoveryCodes: Decodable {
        var recoveryCodes: [String]
        enum CodingKeys: String, CodingKey { case recoveryCodes = "recovery_codes" }
    }

    // MARK: Passkeys

    /// Creation options (PublicKeyCredentialCreationOptionsJSON) for a new passkey, to hand to
    /// the platform's passkey API (needs a recent sign-in).
    public func passkeyRegistrationOptions() async throws -> Data {
        try await authorized("POST", "api/v1/auth/passkeys/register/options", as: RawJSON.self).data
    }

    /// Adds the passkey the platform created (its RegistrationResponseJSON).
    public func registerPasskey(credential: Data, name: String? = nil) async throws -> Passkey {
        var body: [String: Any] = ["credential": try Self.jsonObject(credential)]
        body["name"] = name
        return try await authorized("POST", "api/v1/auth/passkeys/register", json: body, as: Passkey.self)
    }

    /// The user's passkeys.
    public func passkeys() async throws -> [Passkey] {
        struct R: Decodable { var passkeys: [Passkey] }
        return try await authorized("GET", "api/v1/auth/passkeys", as: R.self).passkeys
    }

    /// Removes a passkey (needs a recent sign-in).
    public func deletePasskey(_ id: String) async throws {
        _ = try await authorized("DELETE", "api/v1/auth/passkeys/\(id)", as: Empty.self)
    }

    /// Request options (PublicKeyCredentialRequestOptionsJSON) for signing in with a passkey.
    public func passkeySignInOptions() async throws -> Data {
        try await call("POST", "api/v1/auth/passkeys/login/options", as: RawJSON.self).data
    }

    /// Signs in with the platform's assertion (its AuthenticationResponseJSON); saves and returns the session.
    @discardableResult
    public func signInWithPasskey(credential: Data, deviceName: String? = nil, platform: String? = nil) async throws -> AuthSession {
        let body = device(["credential": try Self.jsonObject(credential)], deviceName, platform)
        return try await signedIn(call("POST", "api/v1/auth/passkeys/login", json: body, as: SessionResponse.self))
    }

    /// A JSON body kept as it came.
    struct RawJSON: Decodable {
        var data: Data
        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer().decode(AnyJSON.self)
            data = try JSONSerialization.data(withJSONObject: value.object, options: [.sortedKeys])
        }
    }

    static func jsonObject(_ data: Data) throws -> Any {
        do { return try JSONSerialization.jsonObject(with: data) } catch { throw AuthClientError.invalidRequest("The credential is not JSON.") }
    }
}

/// Any JSON value, decoded to Foundation objects.
struct AnyJSON: Decodable {
    let object: Any
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { object = NSNull() }
        else if let b = try? c.decode(Bool.self) { object = b }
        else if let n = try? c.decode(Double.self) { object = n }
        else if let s = try? c.decode(String.self) { object = s }
        else if let a = try? c.decode([AnyJSON].self) { object = a.map(\.object) }
        else { object = try c.decode([String: AnyJSON].self).mapValues(\.object) }
    }
}
