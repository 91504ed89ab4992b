import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signing in by approval from another device (contract §15): this device shows two digits, the
/// person types them on a device where they are signed in (``AuthClient/approvals()``,
/// ``AuthClient/approve(_:matchCode:)``), and this device gets a session.
///
/// ```swift
/// let request = try await auth.requestSignInApproval(email: "anna@example.com", deviceName: "Anna's Mac", platform: "macos")
/// show("Type \(request.matchCode) on your phone")
/// do {
///     let session = try await auth.waitForSignInApproval(request)
/// } catch AuthClientError.secondFactorRequired(let challenge) {
///     // the account has a second factor the approving session did not prove: ask for it
/// } catch AuthClientError.approvalDenied, AuthClientError.approvalExpired {
///     // start again
/// }
/// ```
extension AuthClient {
    /// Asks the signed-in devices of the account with this email to approve a sign-in of this one;
    /// show the result's ``SignInApprovalRequest/matchCode`` and wait with ``waitForSignInApproval(_:)``.
    /// The answer looks the same for an address without an account (that request never gets approved).
    /// - Throws: ``AuthClientError/invalidEmail``, ``AuthClientError/rateLimited(retryAfter:)``.
    public func requestSignInApproval(email: String, deviceName: String? = nil, platform: String? = nil) async throws -> SignInApprovalRequest {
        try await call("POST", "api/v1/auth/approval/start", json: device(["email": email], deviceName, platform), as: SignInApprovalRequest.self)
    }

    /// Asks the signed-in devices of the account with this user name to approve a sign-in of this one;
    /// see ``requestSignInApproval(email:deviceName:platform:)``.
    public func requestSignInApproval(username: String, deviceName: String? = nil, platform: String? = nil) async throws -> SignInApprovalRequest {
        try await call("POST", "api/v1/auth/approval/start", json: device(["username": username], deviceName, platform), as: SignInApprovalRequest.self)
    }

    /// Asks the user's other signed-in device to approve a sign-in that threw
    /// ``AuthClientError/secondFactorRequired(_:)`` offering `approval` among its factors; show the
    /// result's ``SignInApprovalRequest/matchCode`` and wait with ``waitForSignInApproval(_:)``.
    /// - Throws: ``AuthClientError/invalidChallenge`` once the challenge is used or expired.
    public func requestSecondFactorApproval(_ challenge: SecondFactorChallenge) async throws -> SignInApprovalRequest {
        var request = try await call("POST", "api/v1/auth/mfa/approval", json: ["challenge": challenge.challenge], as: SignInApprovalRequest.self)
        request.challenge = challenge.challenge
        request.requestToken = nil
        return request
    }

    /// Waits until the person approves the request on their signed-in device, then saves and
    /// returns the session (its access token's `amr` says `approval`). Asks every
    /// ``SignInApprovalRequest/interval`` seconds while the request is pending; cancel the task to stop.
    /// - Throws: ``AuthClientError/approvalDenied`` when it was refused (or the wrong number typed),
    ///   ``AuthClientError/approvalExpired`` when no one answered in time,
    ///   ``AuthClientError/secondFactorRequired(_:)`` when the account has a second factor the
    ///   approving session did not prove (finish with ``completeSignIn(_:with:)`` or
    ///   ``requestSecondFactorApproval(_:)``), ``AuthClientError/invalidState(_:)`` when the request
    ///   already signed a device in, ``AuthClientError/notFound`` for an unknown request.
    @discardableResult
    public func waitForSignInApproval(_ request: SignInApprovalRequest) async throws -> AuthSession {
        let path: String, body: [String: Any]
        if let challenge = request.challenge {
            (path, body) = ("api/v1/auth/mfa/verify", ["challenge": challenge, "approval": request.requestID])
        } else {
            (path, body) = ("api/v1/auth/approval/\(Self.requestIDSegment(request.requestID))/complete", ["request_token": request.requestToken ?? ""])
        }
        // The server says EXPIRED itself; the deadline only keeps a server that never does from holding the caller forever.
        let deadline = Date().addingTimeInterval(TimeInterval(max(request.expiresIn, 0)) + 30)
        var wait = max(request.interval, 1)
        while true {
            try await Task.sleep(for: .seconds(wait))
            wait = max(request.interval, 1)
            let result = try await send("POST", path, json: body)
            if result.1.statusCode == 400, Self.errorCode(result.0) == "PENDING" {
                if Date() >= deadline { throw AuthClientError.approvalExpired }
                continue
            }
            do {
                return try await signedIn(decode(SessionResponse.self, result))
            } catch AuthClientError.rateLimited(let retryAfter) where Date() < deadline {
                wait = max(wait, retryAfter)
            }
        }
    }

    /// A request id (base64url) as a path segment: anything else is percent-encoded.
    static func requestIDSegment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_"))) ?? ""
    }

    /// The `code` of a contract error body.
    static func errorCode(_ data: Data) -> String? {
        ((try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? [String: Any])?["code"] as? String
    }
}
