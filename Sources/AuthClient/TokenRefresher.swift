import Foundation

/// Makes concurrent refreshes share one request (single flight): whoever comes while a refresh is
/// running waits for its result, and whoever comes after it finds the new tokens in the store.
actor TokenRefresher {
    private var inflight: Task<AuthTokens, any Error>?
    /// Refresh calls actually sent to the server.
    private(set) var sent = 0

    func refresh(from current: AuthTokens, store: any TokenStore, perform: @escaping @Sendable (AuthTokens) async throws -> AuthTokens) async throws -> AuthTokens {
        if let inflight { return try await inflight.value }
        let task = Task<AuthTokens, any Error> {
            if let stored = try await store.load(), stored.refreshToken != current.refreshToken { return stored }
            return try await perform(current)
        }
        inflight = task
        defer { inflight = nil }
        return try await task.value
    }

    func countSent() { sent += 1 }
}
