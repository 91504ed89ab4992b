public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// API keys (contract §6) and device sign-in (RFC 8628, contract §7).
extension AuthClient {
    // MARK: API keys

    /// Creates an API key for a device (needs a sign-in within the last `auth.fresh_auth`, else
    /// ``AuthClientError/reauthRequired``). Store ``CreatedAPIKey/secret`` now: it is never shown again.
    public func createAPIKey(name: String, expiresIn: Int? = nil) async throws -> CreatedAPIKey {
        var body: [String: Any] = ["name": name]
        if let expiresIn { body["expires_in"] = expiresIn }
        return try await authorized("POST", "api/v1/auth/api-keys", json: body, as: CreatedAPIKey.self)
    }

    /// The user's API keys.
    public func apiKeys() async throws -> [APIKey] {
        struct R: Decodable { var apiKeys: [APIKey]; enum CodingKeys: String, CodingKey { case apiKeys = "api_keys" } }
        return try await authorized("GET", "api/v1/auth/api-keys", as: R.self).apiKeys
    }

    /// Revokes one of the user's API keys.
    public func revokeAPIKey(_ id: String) async throws {
        _ = try await authorized("DELETE", "api/v1/auth/api-keys/\(id)", as: Empty.self)
    }

    // MARK: Device sign-in

    /// Starts a device sign-in: show the person ``DeviceSignIn/userCode`` and where to enter it.
    public func startDeviceSignIn(clientID: String? = nil, deviceName: String? = nil, platform: String? = nil) async throws -> DeviceSignIn {
        var form: [(String, String)] = []
        if let clientID { form.append(("client_id", clientID)) }
        if let deviceName { form.append(("device_name", deviceName)) }
        if let platform { form.append(("platform", platform)) }
        let (data, response) = try await postForm("oauth/device_authorization", form)
        guard response.statusCode == 200 else { throw Self.oauthError(data, response) }
        do { return try JSONDecoder().decode(DeviceSignIn.self, from: data) } catch { throw AuthClientError.server(status: response.statusCode, code: nil) }
    }

    /// Polls until the person approves (the session is stored and returned) or denies
    /// (``AuthClientError/deviceSignInDenied``), or the code expires (``AuthClientError/deviceSignInExpired``).
    /// Waits `interval` seconds between polls, 5 more after each `slow_down`, as RFC 8628 §3.5 asks.
    public func waitForDeviceSignIn(_ started: DeviceSignIn, clientID: String? = nil) async throws -> AuthSession {
        var interval = max(started.interval, 1)
        let deadline = Date().addingTimeInterval(TimeInterval(started.expiresIn) + 5)
        while Date() < deadline {
            try await Task.sleep(for: .seconds(interval))
            var form = [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", started.deviceCode)]
            if let clientID { form.append(("client_id", clientID)) }
            let (data, response) = try await postForm("oauth/token", form)
            if response.statusCode == 200 {
                do { return try await signedIn(JSONDecoder().decode(SessionResponse.self, from: data)) } catch let error as AuthClientError { throw error } catch {
                    throw AuthClientError.server(status: 200, code: nil)
                }
            }
            switch Self.oauthCode(data) {
            case "authorization_pending": continue
            case "slow_down": interval += 5
            case "access_denied": throw AuthClientError.deviceSignInDenied
            case "expired_token": throw AuthClientError.deviceSignInExpired
            default: throw Self.oauthError(data, response)
            }
        }
        throw AuthClientError.deviceSignInExpired
    }

    /// The device sign-in waiting for `userCode` (as the person typed it): show its name and code,
    /// and ask whether the code matches the one on the device before approving.
    public func deviceSignInRequest(userCode: String) async throws -> PendingDeviceSignIn {
        try await authorized("GET", "api/v1/auth/device/\(Self.pathSegment(userCode))", as: PendingDeviceSignIn.self)
    }

    /// Approves a device sign-in: the device's next poll gets a session of this user. The session's
    /// refresh token goes along as the proof authd asks of a session that is not freshly signed in.
    public func approveDeviceSignIn(userCode: String) async throws {
        try await approving("api/v1/auth/device/\(Self.pathSegment(userCode))/approve", json: [:])
    }

    /// Denies a device sign-in.
    public func denyDeviceSignIn(userCode: String) async throws {
        _ = try await authorized("POST", "api/v1/auth/device/\(Self.pathSegment(userCode))/deny", as: Empty.self)
    }

    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-"))) ?? ""
    }

    func postForm(_ path: String, _ form: [(String, String)]) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.timeoutInterval = 30
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = Data(
            form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&").utf8)
        return try await perform(request)
    }

    static func oauthCode(_ data: Data) -> String? {
        (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? String
    }

    static func oauthError(_ data: Data, _ response: HTTPURLResponse) -> AuthClientError {
        switch (response.statusCode, oauthCode(data)) {
        case (429, _): .rateLimited(retryAfter: Int(response.value(forHTTPHeaderField: "Retry-After") ?? "") ?? 5)
        case (503, _): .unavailable
        case (_, "invalid_request"?): .invalidRequest("")
        case (_, "invalid_grant"?): .invalidCode(attemptsRemaining: nil)
        case (_, let code): .server(status: response.statusCode, code: code)
        }
    }
}

/// Access tokens for a device that holds an API key: exchanges the key when the current token is
/// about to expire (single flight), so background work never signs in interactively.
///
/// ```swift
/// let tokens = APIKeyTokenProvider(baseURL: server, apiKey: try keychain.read("authd-api-key"))
/// var request = URLRequest(url: uploadURL)
/// request.setValue("Bearer \(try await tokens.accessToken())", forHTTPHeaderField: "Authorization")
/// ```
public actor APIKeyTokenProvider {
    /// The server.
    public nonisolated let baseURL: URL
    private let apiKey: String
    private let session: URLSession
    private let margin: TimeInterval
    private var current: (token: String, expiresAt: Date)?
    private var inflight: Task<(token: String, expiresAt: Date), any Error>?
    /// Exchanges actually sent to the server.
    public private(set) var exchanges = 0

    /// Creates a provider.
    /// - Parameter margin: seconds before expiry at which the key is exchanged again.
    public init(baseURL: URL, apiKey: String, session: URLSession = .shared, margin: TimeInterval = 30) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.session = session
        self.margin = margin
    }

    /// A valid access token (`amr: ["api_key"]`), exchanged anew when the last one is about to expire.
    /// - Throws: ``AuthClientError/invalidAPIKey(reason:)`` once the key is revoked or expired.
    public func accessToken() async throws -> String {
        if let current, current.expiresAt.timeIntervalSinceNow > margin { return current.token }
        if let inflight { return try await inflight.value.token }
        let task = Task { try await self.exchange() }
        inflight = task
        defer { inflight = nil }
        let fresh = try await task.value
        current = fresh
        return fresh.token
    }

    /// Forgets the current token (e.g. after a 401 from your own API), so the next call exchanges again.
    public func invalidate() { current = nil }

    private func exchange() async throws -> (token: String, expiresAt: Date) {
        exchanges += 1
        var request = URLRequest(url: baseURL.appendingPathComponent("api/v1/auth/api-keys/exchange"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["api_key": apiKey])
        let data: Data, response: URLResponse
        do { (data, response) = try await session.data(for: request) } catch { throw AuthClient.transportError(error) }
        guard let http = response as? HTTPURLResponse else { throw AuthClientError.network("not an HTTP response") }
        guard http.statusCode == 200 else {
            throw AuthClientError.from(status: http.statusCode, body: data, retryAfterHeader: http.value(forHTTPHeaderField: "Retry-After"))
        }
        struct R: Decodable { var accessToken: String; var expiresIn: Int; enum CodingKeys: String, CodingKey { case accessToken = "access_token", expiresIn = "expires_in" } }
        guard let r = try? JSONDecoder().decode(R.self, from: data) else { throw AuthClientError.server(status: 200, code: nil) }
        return (r.accessToken, Date().addingTimeInterval(TimeInterval(r.expiresIn)))
    }
}
