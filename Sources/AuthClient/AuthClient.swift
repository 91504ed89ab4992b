public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A client for an authd server: every endpoint of the contract as a typed async method, tokens
/// kept in a ``TokenStore``, and requests that refresh the session by themselves.
///
/// ```swift
/// let auth = AuthClient(baseURL: URL(string: "https://auth.example.com")!, tokenStore: KeychainTokenStore())
/// try await auth.sendEmailCode("anna@example.com")
/// let session = try await auth.verifyEmailCode(email: "anna@example.com", code: "123456")
/// let me = try await auth.me()
/// ```
public final class AuthClient: Sendable {
    /// The server, e.g. `https://auth.example.com`.
    public let baseURL: URL
    /// Where tokens are kept.
    public let tokenStore: any TokenStore
    /// Refresh this long before the access token expires.
    public let refreshMargin: TimeInterval
    let session: URLSession
    let refresher = TokenRefresher()

    /// Creates a client.
    /// - Parameters:
    ///   - tokenStore: ``InMemoryTokenStore`` by default; ``FileTokenStore`` on Linux devices, `KeychainTokenStore` on Apple platforms.
    ///   - refreshMargin: seconds before expiry at which a request refreshes first.
    public init(baseURL: URL, tokenStore: any TokenStore = InMemoryTokenStore(), session: URLSession = .shared, refreshMargin: TimeInterval = 60) {
        self.baseURL = baseURL
        self.tokenStore = tokenStore
        self.session = session
        self.refreshMargin = refreshMargin
    }

    // MARK: Plumbing

    struct Empty: Decodable {}

    /// Sends a request to `path` and returns the body and response, mapping contract errors.
    func send(_ method: String, _ path: String, json: [String: Any]? = nil, bearer: String? = nil) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = 30
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        return try await perform(request)
    }

    func perform(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw Self.transportError(error)
        }
        guard let http = response as? HTTPURLResponse else { throw AuthClientError.network("not an HTTP response") }
        return (data, http)
    }

    /// A transport failure as the client's error; a request cut short because its task was cancelled
    /// is the task's `CancellationError`, as any other cancelled wait is.
    static func transportError(_ error: any Error) -> any Error {
        if Task.isCancelled || error is CancellationError || (error as? URLError)?.code == .cancelled { return CancellationError() }
        return AuthClientError.network(error.localizedDescription)
    }

    func decode<T: Decodable>(_ type: T.Type, _ result: (Data, HTTPURLResponse)) throws -> T {
        let (data, response) = result
        guard (200..<300).contains(response.statusCode) else {
            throw AuthClientError.from(status: response.statusCode, body: data, retryAfterHeader: response.value(forHTTPHeaderField: "Retry-After"))
        }
        // Any sign-in may answer 202 instead of the session when the user has a second factor (contract §10).
        if response.statusCode == 202, let challenge = SecondFactorChallenge(json: data) {
            throw AuthClientError.secondFactorRequired(challenge)
        }
        if T.self == Empty.self { return Empty() as! T }
        do { return try JSONDecoder().decode(T.self, from: data) } catch {
            throw AuthClientError.server(status: response.statusCode, code: nil)
        }
    }

    /// An unauthenticated call; with `link`, the current session's token is sent so a sign-in links to it.
    func call<T: Decodable>(_ method: String, _ path: String, json: [String: Any]? = nil, link: Bool = false, as type: T.Type) async throws -> T {
        let bearer = link ? try await validTokens().accessToken : nil
        return try decode(T.self, try await send(method, path, json: json, bearer: bearer))
    }

    /// A call with the session's token, refreshing as needed (see ``authorizedRequest(_:)``).
    func authorized<T: Decodable>(_ method: String, _ path: String, json: [String: Any]? = nil, as type: T.Type) async throws -> T {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return try decode(T.self, try await authorizedRequest(request))
    }

    /// Saves the tokens of a sign-in and returns the session.
    func signedIn(_ response: SessionResponse) async throws -> AuthSession {
        let tokens = AuthTokens(accessToken: response.accessToken, refreshToken: response.refreshToken, expiresAt: Date().addingTimeInterval(TimeInterval(response.expiresIn)))
        try await tokenStore.save(tokens)
        return AuthSession(tokens: tokens, user: response.user)
    }

    // MARK: Sessions that look after themselves

    /// Sends `request` with the session's access token: refreshes first when the token expires within
    /// ``refreshMargin``, refreshes and retries once on a 401, and signs out (clears the store, throws
    /// ``AuthClientError/sessionExpired``) when the refresh fails. Concurrent calls share one refresh.
    /// A 401 of authd's about what the request carried rather than the token (a wrong code, wrong
    /// credentials: any code but `UNAUTHORIZED`) is returned as it is, neither retried nor signing out.
    /// Use it for your own API too: it only adds the `Authorization` header.
    public func authorizedRequest(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var tokens = try await validTokens()
        var attempt = request
        attempt.setValue("Bearer \(tokens.accessToken)", forHTTPHeaderField: "Authorization")
        let first = try await perform(attempt)
        guard Self.rejectsToken(first) else { return first }
        tokens = try await refresh(from: tokens)
        attempt.setValue("Bearer \(tokens.accessToken)", forHTTPHeaderField: "Authorization")
        let second = try await perform(attempt)
        if Self.rejectsToken(second) {
            try? await tokenStore.clear()
            throw AuthClientError.sessionExpired
        }
        return second
    }

    /// Whether a response refuses the access token: a 401 that is not one of authd's answers about the
    /// request's content (a wrong match code retried after a refresh would count as a second wrong
    /// answer, and wrong credentials would sign the person out).
    static func rejectsToken(_ result: (Data, HTTPURLResponse)) -> Bool {
        guard result.1.statusCode == 401 else { return false }
        let code = errorCode(result.0)
        return code == nil || code == "UNAUTHORIZED"
    }

    /// The stored tokens, refreshed first when they expire within ``refreshMargin``.
    public func validTokens() async throws -> AuthTokens {
        guard let tokens = try await tokenStore.load() else { throw AuthClientError.notSignedIn }
        if tokens.expiresAt.timeIntervalSinceNow <= refreshMargin { return try await refresh(from: tokens) }
        return tokens
    }

    /// Refreshes now (single flight).
    @discardableResult
    public func refresh() async throws -> AuthTokens {
        guard let tokens = try await tokenStore.load() else { throw AuthClientError.notSignedIn }
        return try await refresh(from: tokens)
    }

    func refresh(from tokens: AuthTokens) async throws -> AuthTokens {
        try await refresher.refresh(from: tokens, store: tokenStore) { current in
            await self.refresher.countSent()
            do {
                let response = try self.decode(SessionResponse.self, try await self.send("POST", "api/v1/auth/refresh", json: ["refresh_token": current.refreshToken]))
                return try await self.signedIn(response).tokens
            } catch let error as AuthClientError {
                switch error {
                case .invalidRefreshToken, .refreshTokenReused, .unauthorized:
                    try? await self.tokenStore.clear()
                    throw AuthClientError.sessionExpired
                default: throw error
                }
            }
        }
    }

    /// Refresh requests actually sent (single flight makes this one for many concurrent callers).
    public var refreshRequestsSent: Int { get async { await refresher.sent } }

    /// Whether tokens are stored.
    public var isSignedIn: Bool { get async { (try? await tokenStore.load()) != nil } }
}
