package import AuthStorage
package import Foundation

/// The rule for a presented refresh token, as a pure function of the session and the time, so
/// every store backend applies exactly the same rule inside its own atomic section.
///
/// - A current token rotates: it and any sibling become retired, the new token becomes current.
/// - A retired token within `grace` seconds of its retirement also succeeds (two requests from one
///   device raced); the new token is added beside the current one, so whichever answer the device
///   kept stays valid.
/// - A retired token after the grace is reuse: someone else may hold a copy, so the session ends.
/// - A session past its expiry answers as if the token were unknown.
package enum RefreshTokenRotation {
    /// What to do.
    package enum Outcome: Sendable, Equatable {
        /// Store this session and hand out the new token.
        case rotated(SessionRecord)
        /// Delete the session and answer `REFRESH_TOKEN_REUSED`.
        case reused
        /// Delete the session and answer `INVALID_REFRESH_TOKEN`.
        case expired
        /// The token is not one of this session's; answer `INVALID_REFRESH_TOKEN`.
        case unknown
    }

    /// Retired tokens remembered per session for reuse detection.
    package static let retiredLimit = 16
    /// Tokens that may be current at once after racing refreshes. Every answer to a race must stay
    /// valid (the device keeps whichever arrived last), so this is a memory cap, not a rule: the
    /// per-session refresh rate limit bounds a race far below it, and the next ordinary rotation
    /// retires them all. Retired tokens are not used to make room, so the token the race presented
    /// stays recognisable for the whole grace.
    package static let currentLimit = 128

    /// Decides the outcome of presenting the token with hash `presented`.
    package static func rotate(
        _ session: SessionRecord, presented: String, newHash: String, now: Date, grace: Int, ttl: Int
    ) -> Outcome {
        guard session.expiresAt > now else { return .expired }
        var next = session
        next.lastUsedAt = now
        next.expiresAt = now.addingTimeInterval(TimeInterval(ttl))
        if session.refreshHashes.contains(presented) {
            // The list is built once at its final size: this runs on every refresh.
            let added = session.refreshHashes.suffix(retiredLimit)
            var retired: [RetiredRefreshToken] = []
            retired.reserveCapacity(retiredLimit)
            retired += session.retired.suffix(retiredLimit - added.count)
            for hash in added { retired.append(RetiredRefreshToken(hash: hash, retiredAt: now)) }
            next.retired = retired
            next.refreshHashes = [newHash]
        } else if let retired = session.retired.first(where: { $0.hash == presented }) {
            guard now.timeIntervalSince(retired.retiredAt) <= TimeInterval(grace) else { return .reused }
            next.refreshHashes.append(newHash)
            if next.refreshHashes.count > currentLimit {
                let dropped = next.refreshHashes.removeFirst()
                next.retired.append(RetiredRefreshToken(hash: dropped, retiredAt: now))
            }
        } else {
            return .unknown
        }
        if next.retired.count > retiredLimit { next.retired.removeFirst(next.retired.count - retiredLimit) }
        return .rotated(next)
    }
}
