package import Foundation
import Synchronization

/// Access tokens whose signature and claims were already checked, so a token presented again skips
/// the Ed25519 verification (the most expensive step of an authenticated request).
///
/// - Keyed by the whole token string: a cache hit means byte-for-byte the token that was verified.
/// - An entry lives until the token's `exp` (plus the skew it was accepted with), never longer.
/// - Bounded by entries and by the bytes of the tokens held: when either is full, expired entries
///   go first, then an arbitrary half; a miss only costs a verify.
/// - It caches the token, not the session: every request still checks that the session is live.
package final class VerifiedTokenCache: Sendable {
    /// A verified token's claims with its ids already parsed (UUID parsing showed in the profile).
    package struct Entry: Sendable, Equatable {
        /// The claims.
        package var claims: AccessTokenClaims
        /// `sub` as a UUID.
        package var userID: UUID
        /// `sid` as a UUID.
        package var sessionID: UUID
        /// Creates an entry.
        package init(claims: AccessTokenClaims, userID: UUID, sessionID: UUID) {
            self.claims = claims
            self.userID = userID
            self.sessionID = sessionID
        }
    }

    private let entries = Mutex<(tokens: [String: Entry], bytes: Int)>(([:], 0))
    /// Most tokens kept.
    package let capacity: Int
    /// Most bytes of tokens kept.
    package let maxBytes: Int

    /// Creates a cache.
    package init(capacity: Int = 50_000, maxBytes: Int = 32 << 20) {
        self.capacity = capacity
        self.maxBytes = maxBytes
    }

    /// The claims of a token verified earlier, if it has not expired at `now` (allowing `skew`).
    package func entry(for token: String, now: Date, skew: Int) -> Entry? {
        guard let entry = entries.withLock({ $0.tokens[token] }) else { return nil }
        guard entry.claims.exp > Int(now.timeIntervalSince1970) - skew else {
            entries.withLock { if $0.tokens.removeValue(forKey: token) != nil { $0.bytes -= token.utf8.count } }
            return nil
        }
        return entry
    }

    /// Remembers a verified token.
    package func insert(_ token: String, entry: Entry, now: Date) {
        let size = token.utf8.count
        entries.withLock { entries in
            guard entries.tokens[token] == nil else { return }
            if entries.tokens.count >= capacity || entries.bytes + size > maxBytes {
                let t = Int(now.timeIntervalSince1970)
                entries.tokens = entries.tokens.filter { $0.value.claims.exp > t }
                entries.bytes = entries.tokens.keys.reduce(0) { $0 + $1.utf8.count }
                if entries.tokens.count >= capacity || entries.bytes + size > maxBytes {
                    for key in entries.tokens.keys.prefix(entries.tokens.count / 2) { entries.tokens[key] = nil }
                    entries.bytes = entries.tokens.keys.reduce(0) { $0 + $1.utf8.count }
                }
            }
            entries.tokens[token] = entry
            entries.bytes += size
        }
    }

    /// Number of tokens held.
    package var count: Int { entries.withLock { $0.tokens.count } }
}
