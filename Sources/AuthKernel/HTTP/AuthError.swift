public import AuthStorage
import Foundation
public import HTTPTypes
public import Hummingbird

/// An error as the contract renders it: `{"error":{"code","message","details"?}}` with its HTTP status.
///
/// Throw one from any route; it renders itself. 429s carry `details.retry_after` and the
/// `Retry-After` header with the same whole number of seconds.
public struct AuthError: Error, HTTPResponseError, Sendable, Equatable {
    /// HTTP status.
    public let status: HTTPResponse.Status
    /// Contract error code, `UPPER_SNAKE_CASE`.
    public let code: String
    /// A sentence a person can read.
    public let message: String
    /// Optional structured details.
    public let details: [String: JSONValue]?
    /// The message's key in the message catalogs and its placeholders' values, for a page that
    /// shows it in the person's language (``worded(_:_:)``); nil for the code's general sentence.
    public private(set) var sentence: (key: String, values: [String: String])?

    /// Creates an error. Prefer the static constructors, which carry the contract's codes.
    public init(status: HTTPResponse.Status, code: String, message: String, details: [String: JSONValue]? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    /// The same error, shown on a page as the catalogs' sentence `key` (the API's JSON keeps
    /// `message`, in English).
    ///
    /// ```swift
    /// throw AuthError.invalidRequest("The password must be at least 12 characters.").worded("password.too_short", ["min": "12"])
    /// ```
    public func worded(_ key: String, _ values: [String: String] = [:]) -> AuthError {
        var copy = self
        copy.sentence = (key, values)
        return copy
    }

    /// Equal in status, code, message and details (the wording is not compared).
    public static func == (a: AuthError, b: AuthError) -> Bool {
        a.status == b.status && a.code == b.code && a.message == b.message && a.details == b.details
    }

    /// Whether `value` is an `AuthError` with `pattern`'s contract code, whatever its message and
    /// details: `catch AuthError.invalidCode { … }` and `case AuthError.invalidChallenge:` match by code.
    ///
    /// ```swift
    /// do { try await kernel.codes.verify(purpose: "magic", key: email, code: code, policy: policy) }
    /// catch AuthError.invalidCode { return false }
    /// ```
    public static func ~= (pattern: AuthError, value: any Error) -> Bool {
        (value as? AuthError)?.code == pattern.code
    }

    /// Whether `value` has `pattern`'s contract code (`switch error { case .invalidCode: … }`).
    public static func ~= (pattern: AuthError, value: AuthError) -> Bool {
        value.code == pattern.code
    }

    /// Seconds to wait, for 429s and the store's 503.
    public var retryAfter: Int? {
        if case .number(let n) = details?["retry_after"] { return Int(n) }
        return nil
    }

    /// `{"error":{"code","details"?,"message"}}`, keys sorted, written directly: through
    /// `JSONEncoder` the body was a tenth of a rejected request's cost (docs/benchmarks.md).
    package var body: [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("error")
        w.beginObject()
        w.key("code")
        w.string(code)
        if let details {
            w.key("details")
            w.value(.object(details))
        }
        w.key("message")
        w.string(message)
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// The HTTP response for it.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if status == .methodNotAllowed, case .array(let methods) = details?["allow"] {
            headers[.allow] = methods.compactMap { if case .string(let m) = $0 { m } else { nil } }.joined(separator: ", ")
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension AuthError {
    /// 400 `INVALID_REQUEST`: the body is not JSON, lacks a field, or a field has the wrong type or value.
    public static func invalidRequest(_ message: String, field: String? = nil) -> AuthError {
        AuthError(status: .badRequest, code: "INVALID_REQUEST", message: message, details: field.map { ["field": .string($0)] })
    }
    /// 400 `INVALID_EMAIL`.
    public static let invalidEmail = AuthError(status: .badRequest, code: "INVALID_EMAIL", message: "That is not a valid email address.")
    /// 403 `ACCOUNT_DISABLED`: an operator disabled the account (an addition to the contract's codes).
    public static let accountDisabled = AuthError(status: .forbidden, code: "ACCOUNT_DISABLED", message: "This account has been disabled. Contact the operator of this service.")
    /// 403 `REAUTH_REQUIRED`: adding or changing a credential needs a session signed in within `auth.fresh_auth`.
    public static let reauthRequired = AuthError(
        status: .forbidden, code: "REAUTH_REQUIRED", message: "Sign in again to change how you sign in: this session started too long ago."
    )
    /// 403 `FORBIDDEN`: a policy demands a second factor the account has none of.
    public static let noSecondFactor = AuthError(
        status: .forbidden, code: "FORBIDDEN", message: "This sign-in needs a second factor, and the account has none set up.")
    /// 403 `FORBIDDEN`: this session may not do this.
    public static let forbidden = AuthError(status: .forbidden, code: "FORBIDDEN", message: "This session is not allowed to do this.")
    /// 403 `SIGNUP_CLOSED`: this server makes no new account for this person (`signup`, contract §17);
    /// an operator's invitation is the way in.
    public static let signupClosed = AuthError(
        status: .forbidden, code: "SIGNUP_CLOSED", message: "New accounts are made by invitation only here. Ask the operator for an invitation.")
    /// 403 `FORBIDDEN`: the app the request is for lets in only members of its groups (contract §17).
    package static let noAccessToApp = AuthError(status: .forbidden, code: "FORBIDDEN", message: "You don't have access to this app. Ask its operator.")
    /// 401 `UNAUTHORIZED`: missing, malformed, expired or forged token, or an ended session.
    public static let unauthorized = AuthError(status: .unauthorized, code: "UNAUTHORIZED", message: "Sign in to continue: the access token is missing, invalid or expired, or its session has ended.")
    /// 401 `INVALID_CHALLENGE`: the second-factor challenge is unknown, used, expired or dead.
    public static let invalidChallenge = AuthError(
        status: .unauthorized, code: "INVALID_CHALLENGE", message: "This sign-in has expired or was already completed. Sign in again.")
    /// 401 `INVALID_CODE` with `details.attempts_remaining`: how many more tries the code or
    /// challenge takes (0: it is dead).
    public static func invalidCode(attemptsRemaining: Int) -> AuthError {
        AuthError(
            status: .unauthorized, code: "INVALID_CODE", message: invalidCode.message,
            details: ["attempts_remaining": .number(Double(max(0, attemptsRemaining)))])
    }
    /// 401 `INVALID_CODE`.
    public static let invalidCode = AuthError(status: .unauthorized, code: "INVALID_CODE", message: "The code is wrong or has expired. Request a new code if needed.")
    /// 401 `INVALID_CODE` for an approval's match code.
    package static func wrongMatchCode(attemptsRemaining: Int) -> AuthError {
        AuthError(
            status: .unauthorized, code: "INVALID_CODE", message: "The match code is wrong. Type the code shown on the device that made the request.",
            details: ["attempts_remaining": .number(Double(attemptsRemaining))])
    }
    /// 401 `INVALID_CREDENTIALS`.
    public static let invalidCredentials = AuthError(status: .unauthorized, code: "INVALID_CREDENTIALS", message: "The credentials are not correct.")
    /// 401 `INVALID_API_KEY`, with `details.reason`: `unknown`, `revoked` or `expired` (contract §6).
    package static func invalidAPIKey(_ reason: String) -> AuthError {
        AuthError(
            status: .unauthorized, code: "INVALID_API_KEY", message: "The API key is \(reason == "unknown" ? "not known" : reason). Create a new one.",
            details: ["reason": .string(reason)])
    }

    /// 401 `INVALID_REFRESH_TOKEN`.
    package static let invalidRefreshToken = AuthError(status: .unauthorized, code: "INVALID_REFRESH_TOKEN", message: "The refresh token is not valid. Sign in again.")
    /// 401 `REFRESH_TOKEN_REUSED`: an already-rotated token came back; its session has been ended.
    package static let refreshTokenReused = AuthError(status: .unauthorized, code: "REFRESH_TOKEN_REUSED", message: "This refresh token was already used, so the session has been ended for safety. Sign in again.")
    /// 404 `NOT_FOUND`.
    public static func notFound(_ message: String = "Not found.") -> AuthError {
        AuthError(status: .notFound, code: "NOT_FOUND", message: message)
    }
    /// 409 `IDENTITY_IN_USE`: the identity belongs to another user.
    public static let identityInUse = AuthError(status: .conflict, code: "IDENTITY_IN_USE", message: "This sign-in method already belongs to another account.")
    /// 409 `USERNAME_TAKEN`.
    public static let usernameTaken = AuthError(status: .conflict, code: "USERNAME_TAKEN", message: "This user name is taken.")
    /// 409 `INVALID_STATE`.
    public static func invalidState(_ message: String) -> AuthError {
        AuthError(status: .conflict, code: "INVALID_STATE", message: message)
    }
    /// 400 `PENDING`: what was asked for is waiting for someone else (another device's approval).
    public static let pending = AuthError(status: .badRequest, code: "PENDING", message: "Still waiting for the approval. Ask again in a moment.")
    /// 403 `DENIED`: the request was denied (on the other device, or by a wrong match code).
    public static let denied = AuthError(status: .forbidden, code: "DENIED", message: "The request was denied on the other device.")
    /// 410 `EXPIRED`: the request was not answered, or not collected, in time.
    public static let expired = AuthError(status: .gone, code: "EXPIRED", message: "The request has expired. Start again.")
    /// 413 `PAYLOAD_TOO_LARGE`.
    package static let payloadTooLarge = AuthError(status: .contentTooLarge, code: "PAYLOAD_TOO_LARGE", message: "The request body is larger than 64 KiB.")
    /// 429 `RATE_LIMIT_EXCEEDED` with the seconds to wait (at least 1).
    public static func rateLimited(retryAfter seconds: Int, message: String = "Too many requests. Try again later.") -> AuthError {
        let s = max(1, seconds)
        return AuthError(status: .tooManyRequests, code: "RATE_LIMIT_EXCEEDED", message: message, details: ["retry_after": .number(Double(s))])
    }
    /// 500 `INTERNAL`.
    package static let `internal` = AuthError(status: .internalServerError, code: "INTERNAL", message: "Something went wrong on the server.")
    /// 503 `UNAVAILABLE` with `details.reason` `store`: the store cannot be read or written now. It
    /// carries `Retry-After: 1` (and `details.retry_after`): a database that went away is probed every
    /// quarter second, and a busy pool frees up in moments.
    public static let unavailable = AuthError(
        status: .serviceUnavailable, code: "UNAVAILABLE", message: "The server cannot save changes right now. Try again later.",
        details: ["reason": .string("store"), "retry_after": .number(1)])

    /// 503 `UNAVAILABLE` with `details.reason` `upstream` and the `provider` whose outside service
    /// (an identity provider, Apple's keys) cannot be reached now (contract §17).
    public static func upstreamUnavailable(provider: String, message: String) -> AuthError {
        AuthError(status: .serviceUnavailable, code: "UNAVAILABLE", message: message, details: ["reason": .string("upstream"), "provider": .string(provider)])
    }
}

