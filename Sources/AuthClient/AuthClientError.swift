public import Foundation

/// Everything that can go wrong, as one enum mirroring the contract's error codes, each with a
/// message fit to show a person.
public enum AuthClientError: Error, Sendable, Equatable, LocalizedError {
    case invalidRequest(String)
    case invalidEmail
    case weakPassword(reason: String)
    case invalidPIN
    case unauthorized
    case invalidCode(attemptsRemaining: Int?)
    case invalidCredentials
    case invalidRefreshToken
    case refreshTokenReused
    case invalidAppleToken
    /// The identity provider's ID token was refused (`INVALID_ID_TOKEN`): forged, expired, for
    /// another app, used before, or its nonce does not match. Sign in with the provider again.
    case invalidIDToken
    case emailNotVerified
    /// An operator disabled the account (`ACCOUNT_DISABLED`, authd's addition to the contract).
    case accountDisabled
    /// This server makes no new account for this person (`SIGNUP_CLOSED`): new accounts come by the
    /// operator's invitation, or only for some email domains.
    case signupClosed
    /// Adding or changing a credential needs a recent sign-in (`REAUTH_REQUIRED`): sign in again first.
    case reauthRequired
    /// This session may not do this (`FORBIDDEN`): e.g. one made from an API key or by device sign-in.
    case forbidden
    /// The API key does not work (`INVALID_API_KEY`): `reason` is `unknown`, `revoked` or `expired`.
    case invalidAPIKey(reason: String)
    /// The person denied the device sign-in.
    case deviceSignInDenied
    /// The device code expired before anyone approved it: start again.
    case deviceSignInExpired
    /// The sign-in was not approved on the other device (`DENIED`): the person refused it, or typed
    /// the wrong number there.
    case approvalDenied
    /// No one approved the sign-in before it expired (`EXPIRED`): start again.
    case approvalExpired
    case notFound
    case accountExists
    case identityInUse
    case usernameTaken
    case invalidState(String)
    case payloadTooLarge
    /// Too many attempts; try again after this many seconds.
    case rateLimited(retryAfter: Int)
    /// The server is not accepting changes right now.
    case unavailable
    /// The session ended (refresh failed) and the stored tokens were cleared: sign in again.
    case sessionExpired
    /// No signed-in session for a call that needs one.
    case notSignedIn
    /// The server could not be reached.
    case network(String)
    /// The server answered something unexpected (a 5xx, or a body that is not the contract's).
    case server(status: Int, code: String?)
    /// The first factor was right and a second one is needed: show the offered factors, then
    /// finish with ``AuthClient/completeSignIn(_:with:deviceName:platform:)``.
    case secondFactorRequired(SecondFactorChallenge)
    /// The sign-in challenge is unknown, used, expired or dead after wrong answers (`INVALID_CHALLENGE`): sign in again.
    case invalidChallenge

    /// A sentence to show a person.
    public var errorDescription: String? {
        switch self {
        case .invalidRequest: "Something in the request was not right. Please try again."
        case .invalidEmail: "That doesn't look like a valid email address."
        case .weakPassword(let reason):
            switch reason {
            case "too_short": "That password is too short."
            case "too_long": "That password is too long."
            case "matches_email": "Don't use your email address as your password."
            case "too_common": "That password is too common. Please choose another."
            default: "Please choose a stronger password."
            }
        case .invalidPIN: "A PIN is 4 to 8 digits."
        case .unauthorized, .sessionExpired, .notSignedIn, .invalidRefreshToken, .refreshTokenReused:
            "Your session has ended. Please sign in again."
        case .invalidCode(let left?) where left > 0: "That code is wrong. \(left) \(left == 1 ? "try" : "tries") left."
        case .invalidCode: "That code is wrong or has expired. You can ask for a new one."
        case .invalidCredentials: "Those sign-in details are not correct."
        case .invalidAppleToken: "Sign in with Apple didn't work. Please try again."
        case .invalidIDToken: "Signing in with that account didn't work. Please try again."
        case .emailNotVerified: "Please confirm your email address first. We've sent you a code."
        case .accountDisabled: "This account has been disabled. Please contact support."
        case .signupClosed: "New accounts are made by invitation only. Ask whoever runs this service for an invitation."
        case .reauthRequired: "For your security, please sign in again first."
        case .forbidden: "This device is not allowed to do that. Use an app you are signed in to."
        case .invalidAPIKey(let reason):
            reason == "expired" ? "This device's key has expired. Create a new one." : "This device's key no longer works. Create a new one."
        case .deviceSignInDenied: "The sign-in was denied."
        case .deviceSignInExpired: "The code expired before it was approved. Start again."
        case .approvalDenied: "The sign-in was not approved on your other device."
        case .approvalExpired: "The sign-in was not approved in time. Please start again."
        case .notFound: "That could not be found."
        case .accountExists: "An account with this email already exists. Try signing in instead."
        case .identityInUse: "This sign-in method already belongs to another account."
        case .usernameTaken: "That user name is taken."
        case .invalidState: "That can't be done right now."
        case .payloadTooLarge: "That is too much data to send."
        case .rateLimited(let seconds): "Too many attempts. Please try again in \(Self.wait(seconds))."
        case .unavailable: "The service is busy right now. Please try again in a moment."
        case .network: "Can't reach the server. Check your connection and try again."
        case .server: "Something went wrong on our side. Please try again later."
        case .secondFactorRequired: "Please confirm it's you with your second factor."
        case .invalidChallenge: "That sign-in has expired. Please sign in again."
        }
    }

    static func wait(_ seconds: Int) -> String {
        seconds < 60 ? "\(seconds) second\(seconds == 1 ? "" : "s")" : "\((seconds + 59) / 60) minute\((seconds + 59) / 60 == 1 ? "" : "s")"
    }

    /// Maps a contract error body.
    static func from(status: Int, body: Data, retryAfterHeader: String?) -> AuthClientError {
        struct Envelope: Decodable {
            struct Inner: Decodable {
                var code: String
                var message: String?
                var details: [String: Detail]?
            }
            var error: Inner
        }
        enum Detail: Decodable {
            case int(Int), string(String), other
            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let i = try? c.decode(Int.self) { self = .int(i) } else if let s = try? c.decode(String.self) { self = .string(s) } else { self = .other }
            }
        }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: body) else {
            return status >= 500 ? (status == 503 ? .unavailable : .server(status: status, code: nil)) : .server(status: status, code: nil)
        }
        let e = envelope.error
        switch e.code {
        case "INVALID_REQUEST": return .invalidRequest(e.message ?? "")
        case "INVALID_EMAIL": return .invalidEmail
        case "WEAK_PASSWORD":
            if case .string(let reason) = e.details?["reason"] { return .weakPassword(reason: reason) }
            return .weakPassword(reason: "")
        case "INVALID_PIN": return .invalidPIN
        case "UNAUTHORIZED": return .unauthorized
        case "INVALID_CODE":
            if case .int(let left) = e.details?["attempts_remaining"] { return .invalidCode(attemptsRemaining: left) }
            return .invalidCode(attemptsRemaining: nil)
        case "INVALID_CREDENTIALS": return .invalidCredentials
        case "INVALID_REFRESH_TOKEN": return .invalidRefreshToken
        case "REFRESH_TOKEN_REUSED": return .refreshTokenReused
        case "INVALID_APPLE_TOKEN": return .invalidAppleToken
        case "INVALID_ID_TOKEN": return .invalidIDToken
        case "EMAIL_NOT_VERIFIED": return .emailNotVerified
        case "ACCOUNT_DISABLED": return .accountDisabled
        case "SIGNUP_CLOSED": return .signupClosed
        case "REAUTH_REQUIRED": return .reauthRequired
        case "FORBIDDEN": return .forbidden
        case "INVALID_API_KEY":
            if case .string(let reason) = e.details?["reason"] { return .invalidAPIKey(reason: reason) }
            return .invalidAPIKey(reason: "unknown")
        case "NOT_FOUND": return .notFound
        case "ACCOUNT_EXISTS": return .accountExists
        case "IDENTITY_IN_USE": return .identityInUse
        case "USERNAME_TAKEN": return .usernameTaken
        case "INVALID_STATE": return .invalidState(e.message ?? "")
        case "INVALID_CHALLENGE": return .invalidChallenge
        case "DENIED": return .approvalDenied
        case "EXPIRED": return .approvalExpired
        case "PAYLOAD_TOO_LARGE": return .payloadTooLarge
        case "RATE_LIMIT_EXCEEDED":
            if case .int(let s) = e.details?["retry_after"] { return .rateLimited(retryAfter: s) }
            return .rateLimited(retryAfter: Int(retryAfterHeader ?? "") ?? 1)
        case "UNAVAILABLE": return .unavailable
        default: return .server(status: status, code: e.code)
        }
    }
}
