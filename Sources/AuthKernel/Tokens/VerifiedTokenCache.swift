public import Foundation
import Synchronization

/// Access tokens whose signature and claims were already checked, so a token presented again skips
/// the Ed25519 verification (the most expensive step of an authenticated request).
///
/// - Keyed by the whole token string: a cache hit means byte-for-byte the token that was verified.
/// - An entry lives until the token's `exp` (plus the skew it was accepted with), never longer.
/// - Bounded: when full, expired entries go first, then an arbitrary half; a miss only costs a verify.
/// - It caches the token, not the session: every request still checks that the session is live.
public final class VerifiedTokenCache: Sendable {
    private let entries = Mutex<[String: AccessTokenClaims]>([:])
    /// Most tokens kept.
    public let capacity: Int

    /// Creates a cache.
    public init(capacity: Int = 50_000) { self.capacity = capacity }

    /// The claims of a token verified earlier, if it has not expired at `now` (allowing `skew`).
    public func claims(for token: String, now: Date, skew: Int) -> AccessTokenClaims? {
        guard let claims = entries.withLock({ $0[token] }) else { return nil }
        guard claims.exp > Int(now.timeIntervalSince1970) - skew else {
            entries.withLock { $0[token] = nil }
            return nil
        }
        return claims
    }

    /// Remembers a verified token.
    public func insert(_ token: String, claims: AccessTokenClaims, now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                let t = Int(now.timeIntervalSince1970)
                entries = entries.filter { $0.value.exp > t }
                if entries.count >= capacity {
                    for key in entries.keys.prefix(entries.count / 2) { entries[key] = nil }
                }
            }
            entries[token] = claims
        }
    }

    /// Number of tokens held.
    public var count: Int { entries.withLock { $0.count } }
}
