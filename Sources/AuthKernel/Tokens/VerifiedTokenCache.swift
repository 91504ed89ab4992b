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
    /// A verified token's claims with its ids already parsed (UUID parsing showed in the profile).
    public struct Entry: Sendable, Equatable {
        /// The claims.
        public var claims: AccessTokenClaims
        /// `sub` as a UUID.
        public var userID: UUID
        /// `sid` as a UUID.
        public var sessionID: UUID
        /// Creates an entry.
        public init(claims: AccessTokenClaims, userID: UUID, sessionID: UUID) {
            self.claims = claims
            self.userID = userID
            self.sessionID = sessionID
        }
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Most tokens kept.
    public let capacity: Int

    /// Creates a cache.
    public init(capacity: Int = 50_000) { self.capacity = capacity }

    /// The claims of a token verified earlier, if it has not expired at `now` (allowing `skew`).
    public func entry(for token: String, now: Date, skew: Int) -> Entry? {
        guard let entry = entries.withLock({ $0[token] }) else { return nil }
        guard entry.claims.exp > Int(now.timeIntervalSince1970) - skew else {
            entries.withLock { $0[token] = nil }
            return nil
        }
        return entry
    }

    /// Remembers a verified token.
    public func insert(_ token: String, entry: Entry, now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                let t = Int(now.timeIntervalSince1970)
                entries = entries.filter { $0.value.claims.exp > t }
                if entries.count >= capacity {
                    for key in entries.keys.prefix(entries.count / 2) { entries[key] = nil }
                }
            }
            entries[token] = entry
        }
    }

    /// Number of tokens held.
    public var count: Int { entries.withLock { $0.count } }
}
