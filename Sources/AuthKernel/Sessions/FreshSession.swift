import Foundation

/// The rule that adding or changing a way to sign in needs a fresh session (contract 5): one whose
/// interactive sign-in (the access token's `auth_time`) is at most `auth.fresh_auth` seconds old, so
/// that a stolen access token cannot plant a credential.
enum FreshSession {
    /// Throws 403 `REAUTH_REQUIRED` unless `principal`'s session is fresh at `now`. A user with no way
    /// to sign in again (anonymous, nothing linked) is let through: they could never become fresh.
    static func require(_ principal: Principal, now: Date, within seconds: Int) throws(AuthError) {
        // A key's or a device's session never changes credentials, however new (contract §5).
        if principal.session.isLimited { throw AuthError.forbidden }
        if principal.user.isAnonymous, principal.user.identities.isEmpty { return }
        guard isFresh(principal, now: now, within: seconds) else { throw AuthError.reauthRequired }
    }

    /// Whether `principal`'s session signed in (its `auth_time`) at most `seconds` before `now`.
    static func isFresh(_ principal: Principal, now: Date, within seconds: Int) -> Bool {
        now.timeIntervalSince(principal.session.signedInAt) <= TimeInterval(seconds)
    }
}
