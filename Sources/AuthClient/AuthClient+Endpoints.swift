public import Foundation

/// Every endpoint of the contract.
extension AuthClient {
    // MARK: Kernel

    /// The providers the server offers.
    public func providers() async throws -> [String] {
        struct R: Decodable { var providers: [String] }
        return try await call("GET", "api/v1/auth/providers", as: R.self).providers
    }

    /// The signed-in user.
    public func me() async throws -> AuthUser {
        try await authorized("GET", "api/v1/auth/me", as: AuthUser.self)
    }

    /// Sets (or with nil clears) the display name.
    public func updateDisplayName(_ name: String?) async throws -> AuthUser {
        try await authorized("PATCH", "api/v1/auth/me", json: ["display_name": name as Any? ?? NSNull()], as: AuthUser.self)
    }

    /// Replaces the user's own metadata (at most 4 KiB of JSON; an empty dictionary clears it).
    public func updateUserMetadata(_ metadata: [String: MetadataValue]) async throws -> AuthUser {
        try await authorized("PATCH", "api/v1/auth/me", json: ["user_metadata": metadata.mapValues(\.foundationValue)], as: AuthUser.self)
    }

    /// Sets the person's language (a BCP 47 tag such as `"de"` or `"pt-BR"`; nil clears it): the
    /// server writes its mail to them in it. A tag that is not well-formed is refused (`.invalidRequest`).
    public func updateLocale(_ locale: String?) async throws -> AuthUser {
        try await authorized("PATCH", "api/v1/auth/me", json: ["locale": locale as Any? ?? NSNull()], as: AuthUser.self)
    }

    /// The user's signed-in devices.
    public func sessions() async throws -> [AuthSessionInfo] {
        struct R: Decodable { var sessions: [AuthSessionInfo] }
        return try await authorized("GET", "api/v1/auth/sessions", as: R.self).sessions
    }

    /// Ends one of the user's sessions.
    public func revokeSession(_ id: String) async throws {
        _ = try await authorized("DELETE", "api/v1/auth/sessions/\(id)", as: Empty.self)
    }

    /// Ends this session and forgets the tokens (they are forgotten even when the server cannot be reached).
    /// It ends the session by its refresh token, so it works however long the app sat idle.
    public func logout() async throws {
        defer { Task { try? await tokenStore.clear() } }
        guard let tokens = try await tokenStore.load() else { return }
        _ = try decode(Empty.self, try await send("POST", "api/v1/auth/logout", json: ["refresh_token": tokens.refreshToken]))
        try await tokenStore.clear()
    }

    /// Deletes the account with everything in it, and forgets the tokens.
    public func deleteAccount() async throws {
        _ = try await authorized("DELETE", "api/v1/auth/account", as: Empty.self)
        try await tokenStore.clear()
    }

    /// Registers this session's APNs device token, so approval requests for the user push an alert
    /// to this device. `environment` is `"production"` or `"sandbox"` (a development build).
    public func registerPushToken(_ deviceToken: Data, environment: String = "production", topic: String? = nil) async throws {
        var body: [String: Any] = ["apns_token": deviceToken.map { String(format: "%02x", $0) }.joined(), "environment": environment]
        body["topic"] = topic
        _ = try await authorized("PUT", "api/v1/auth/sessions/current/push", json: body, as: Empty.self)
    }

    /// Stops pushes to this device.
    public func unregisterPushToken() async throws {
        _ = try await authorized("DELETE", "api/v1/auth/sessions/current/push", as: Empty.self)
    }

    /// New approval requests for this user as they come, each once: on Apple platforms from the
    /// server's event stream (`/approvals/stream`), elsewhere (FoundationNetworking has no streaming
    /// bodies) by asking `GET /approvals` every `pollInterval`. Cancel the task iterating it to stop.
    public func approvalRequests(pollInterval: Duration = .seconds(5)) -> AsyncThrowingStream<Approval, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var seen = Set<String>()
                do {
                    for approval in try await approvals() where seen.insert(approval.id).inserted { continuation.yield(approval) }
                    #if canImport(Darwin)
                    var request = URLRequest(url: baseURL.appendingPathComponent("api/v1/auth/approvals/stream"))
                    request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
                    request.setValue("Bearer \(try await validTokens().accessToken)", forHTTPHeaderField: "Authorization")
                    request.timeoutInterval = 24 * 3600
                    let (bytes, response) = try await session.bytes(for: request)
                    guard let http = response as? HTTPURLResponse, http.statusCode == 200 else { throw AuthClientError.unauthorized }
                    var event: String?
                    for try await line in bytes.lines {
                        if line.hasPrefix("event:") {
                            event = line.dropFirst(6).trimmingCharacters(in: .whitespaces)
                        } else if line.hasPrefix("data:"), event == "approval",
                            let approval = try? JSONDecoder().decode(Approval.self, from: Data(line.dropFirst(5).utf8)),
                            seen.insert(approval.id).inserted
                        {
                            continuation.yield(approval)
                        }
                    }
                    #else
                    while !Task.isCancelled {
                        try await Task.sleep(for: pollInterval)
                        for approval in try await approvals() where seen.insert(approval.id).inserted { continuation.yield(approval) }
                    }
                    #endif
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Requests from other devices of this user waiting for approval.
    public func approvals() async throws -> [Approval] {
        struct R: Decodable { var approvals: [Approval] }
        return try await authorized("GET", "api/v1/auth/approvals", as: R.self).approvals
    }

    /// Approves a request with the match code its device shows. The session's refresh token goes
    /// along as the proof authd asks of a session that is not freshly signed in.
    public func approve(_ id: String, matchCode: String) async throws {
        try await approving("api/v1/auth/approvals/\(id)/approve", json: ["match_code": matchCode])
    }

    /// Posts an approval with this session's refresh token beside `json`: an access token alone
    /// approves only while the sign-in is fresh, so a leaked one never lets another device in.
    func approving(_ path: String, json: [String: Any]) async throws {
        var body = json
        body["refresh_token"] = try await validTokens().refreshToken
        _ = try await authorized("POST", path, json: body, as: Empty.self)
    }

    /// Denies a request. With `notMe`, the person says they did not ask for this sign-in: for an
    /// hour authd answers further sign-in requests for them from that network with decoys that never
    /// reach this device, stops pushing their sign-in requests for a day (they are still listed),
    /// and mails them that it was refused.
    public func deny(_ id: String, notMe: Bool = false) async throws {
        _ = try await authorized("POST", "api/v1/auth/approvals/\(id)/deny", json: notMe ? ["reason": "not_me"] : nil, as: Empty.self)
    }

    // MARK: email

    /// Mails a sign-in code.
    @discardableResult
    public func sendEmailCode(_ email: String) async throws -> CodeSent {
        try await call("POST", "api/v1/auth/email/send-code", json: ["email": email], as: CodeSent.self)
    }

    /// Mails a new sign-in code.
    @discardableResult
    public func resendEmailCode(_ email: String) async throws -> CodeSent {
        try await call("POST", "api/v1/auth/email/resend-code", json: ["email": email], as: CodeSent.self)
    }

    /// Signs in with the mailed code; with `link`, adds the email to the signed-in (e.g. anonymous) user instead.
    @discardableResult
    public func verifyEmailCode(email: String, code: String, deviceName: String? = nil, platform: String? = nil, link: Bool = false) async throws -> AuthSession {
        try await signedIn(call("POST", "api/v1/auth/email/verify", json: device(["email": email, "code": code], deviceName, platform), link: link, as: SessionResponse.self))
    }

    // MARK: apple

    /// Signs in with what AuthenticationServices returned; `nonce` is the raw nonce whose SHA-256 the request carried.
    @discardableResult
    public func signInWithApple(
        identityToken: String, authorizationCode: String? = nil, nonce: String? = nil, fullName: PersonNameComponents? = nil,
        deviceName: String? = nil, platform: String? = nil, link: Bool = false
    ) async throws -> AuthSession {
        var body: [String: Any] = ["identity_token": identityToken]
        body["authorization_code"] = authorizationCode
        body["nonce"] = nonce
        if let fullName {
            var name: [String: Any] = [:]
            name["given_name"] = fullName.givenName
            name["family_name"] = fullName.familyName
            body["full_name"] = name
        }
        return try await signedIn(call("POST", "api/v1/auth/apple", json: device(body, deviceName, platform), link: link, as: SessionResponse.self))
    }

    // MARK: oidc

    /// Signs in with the ID token another identity provider's SDK gave the app (Google, Microsoft,
    /// GitLab): `provider` is its name in authd's `oidc.providers`, `nonce` the raw nonce the app
    /// asked the provider to put in the token. With `link`, adds that identity to the signed-in user.
    @discardableResult
    public func signIn(
        withIDToken idToken: String, provider: String, nonce: String?, deviceName: String? = nil, platform: String? = nil, link: Bool = false
    ) async throws -> AuthSession {
        var body: [String: Any] = ["id_token": idToken]
        body["nonce"] = nonce
        let name = provider.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_"))) ?? ""
        return try await signedIn(call("POST", "api/v1/auth/oidc/\(name)", json: device(body, deviceName, platform), link: link, as: SessionResponse.self))
    }

    // MARK: pin

    /// Starts an anonymous session.
    @discardableResult
    public func signInAnonymously(deviceName: String? = nil, platform: String? = nil) async throws -> AuthSession {
        try await signedIn(call("POST", "api/v1/auth/anonymous", json: device([:], deviceName, platform), as: SessionResponse.self))
    }

    /// Sets the PIN (4–8 digits), or changes it with the current one.
    public func setPIN(_ pin: String, currentPIN: String? = nil) async throws {
        var body: [String: Any] = ["pin": pin]
        body["current_pin"] = currentPIN
        _ = try await authorized("PUT", "api/v1/auth/pin", json: body, as: Empty.self)
    }

    /// Chooses a user name.
    @discardableResult
    public func setUsername(_ username: String) async throws -> AuthUser {
        try await authorized("PUT", "api/v1/auth/username", json: ["username": username], as: AuthUser.self)
    }

    /// Signs in with a user name and PIN.
    @discardableResult
    public func signIn(username: String, pin: String, deviceName: String? = nil, platform: String? = nil) async throws -> AuthSession {
        try await signedIn(call("POST", "api/v1/auth/pin/verify", json: device(["username": username, "pin": pin], deviceName, platform), as: SessionResponse.self))
    }

    /// Signs in with a user id and PIN.
    @discardableResult
    public func signIn(userID: String, pin: String, deviceName: String? = nil, platform: String? = nil) async throws -> AuthSession {
        try await signedIn(call("POST", "api/v1/auth/pin/verify", json: device(["user_id": userID, "pin": pin], deviceName, platform), as: SessionResponse.self))
    }

    // MARK: password

    /// Registers; a code is mailed and ``verifyRegistration(email:code:password:deviceName:platform:link:)`` finishes it.
    /// With `link`, the password joins the signed-in (e.g. anonymous) user.
    public func register(email: String, password: String, displayName: String? = nil, link: Bool = false) async throws {
        var body: [String: Any] = ["email": email, "password": password]
        body["display_name"] = displayName
        struct R: Decodable { var status: String }
        _ = try await call("POST", "api/v1/auth/password/register", json: body, link: link, as: R.self)
    }

    /// Finishes a registration with the mailed code and the password given to ``register(email:password:displayName:link:)``
    /// (the code alone does not say whose registration it is). With `link`, send the same signed-in
    /// user's token as at registration.
    @discardableResult
    public func verifyRegistration(
        email: String, code: String, password: String, deviceName: String? = nil, platform: String? = nil, link: Bool = false
    ) async throws -> AuthSession {
        try await signedIn(
            call(
                "POST", "api/v1/auth/password/verify-email", json: device(["email": email, "code": code, "password": password], deviceName, platform),
                link: link, as: SessionResponse.self))
    }

    /// Mails the verification code again.
    public func resendVerification(email: String) async throws {
        _ = try await call("POST", "api/v1/auth/password/resend-verification", json: ["email": email], as: CodeSent.self)
    }

    /// Signs in with email and password.
    @discardableResult
    public func signIn(email: String, password: String, deviceName: String? = nil, platform: String? = nil) async throws -> AuthSession {
        try await signedIn(call("POST", "api/v1/auth/password/login", json: device(["email": email, "password": password], deviceName, platform), as: SessionResponse.self))
    }

    /// Changes (or, without a current one, adds) the password; the other sessions end.
    public func changePassword(current: String?, new: String) async throws {
        var body: [String: Any] = ["new_password": new]
        body["current_password"] = current
        _ = try await authorized("POST", "api/v1/auth/password/change", json: body, as: Empty.self)
    }

    /// Mails a reset code if the account exists (the answer is the same either way).
    public func startEmailReset(email: String) async throws {
        _ = try await call("POST", "api/v1/auth/password/reset/email/initiate", json: ["email": email], as: CodeSent.self)
    }

    /// Sets a new password with the mailed reset code; every session ends.
    public func completeEmailReset(email: String, code: String, newPassword: String) async throws {
        struct R: Decodable { var message: String }
        _ = try await call("POST", "api/v1/auth/password/reset/email/verify", json: ["email": email, "code": code, "new_password": newPassword], as: R.self)
    }

    /// The two-step reset's first step: trades the mailed code for a reset token (single use, 10
    /// minutes), so the app can ask for the new password on a screen of its own.
    public func verifyEmailResetCode(email: String, code: String) async throws -> String {
        struct R: Decodable { var resetToken: String; enum CodingKeys: String, CodingKey { case resetToken = "reset_token" } }
        return try await call("POST", "api/v1/auth/password/reset/email/verify", json: ["email": email, "code": code], as: R.self).resetToken
    }

    /// The two-step reset's second step: sets the new password (every session ends) and, with
    /// `signIn`, signs this device in and returns the session.
    @discardableResult
    public func completeReset(resetToken: String, newPassword: String, signIn: Bool = false, deviceName: String? = nil, platform: String? = nil) async throws -> AuthSession? {
        let body = device(["reset_token": resetToken, "new_password": newPassword, "sign_in": signIn], deviceName, platform)
        guard signIn else {
            struct R: Decodable { var message: String }
            _ = try await call("POST", "api/v1/auth/password/reset/complete", json: body, as: R.self)
            return nil
        }
        return try await signedIn(call("POST", "api/v1/auth/password/reset/complete", json: body, as: SessionResponse.self))
    }

    /// Asks the account's signed-in devices to approve a new password; show the result's `matchCode`.
    public func startDeviceReset(email: String, newPassword: String, deviceName: String? = nil) async throws -> DeviceResetRequest {
        var body: [String: Any] = ["email": email, "new_password": newPassword]
        body["device_name"] = deviceName
        return try await call("POST", "api/v1/auth/password/reset/device/initiate", json: body, as: DeviceResetRequest.self)
    }

    /// Where a device reset stands.
    public func deviceResetStatus(_ requestID: String) async throws -> DeviceResetStatus {
        struct R: Decodable { var status: DeviceResetStatus }
        return try await call("GET", "api/v1/auth/password/reset/device/\(requestID)", as: R.self).status
    }

    /// Polls until the request is no longer pending (or `timeout` passes) and returns its status.
    public func waitForDeviceResetApproval(_ requestID: String, pollInterval: Duration = .seconds(2), timeout: Duration = .seconds(120)) async throws -> DeviceResetStatus {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = try await deviceResetStatus(requestID)
            if status != .pending || ContinuousClock.now >= deadline { return status }
            try await Task.sleep(for: pollInterval)
        }
    }

    /// Applies an approved reset; every session of the account ends.
    public func completeDeviceReset(_ requestID: String) async throws {
        struct R: Decodable { var message: String }
        _ = try await call("POST", "api/v1/auth/password/reset/device/\(requestID)/complete", as: R.self)
    }

    func device(_ body: [String: Any], _ name: String?, _ platform: String?) -> [String: Any] {
        var body = body
        body["device_name"] = name
        body["platform"] = platform
        return body
    }
}
