public import AuthStorage
public import Foundation
import Synchronization

/// What happened to accounts, for providers (and later webhooks) to follow: a credential changed, a
/// session ended. Hooks run after the change is durable, in registration order, and must not throw
/// or block for long: record work (``JobQueue``) rather than do it.
public final class AccountEvents: Sendable {
    /// Called with the user and what changed (`"password"`, `"pin"`, a provider's id).
    public typealias CredentialHook = @Sendable (_ userID: UUID, _ credential: String) async -> Void
    /// Called with a session that ended (logout, revocation, expiry, reuse, a credential change).
    public typealias SessionHook = @Sendable (_ session: SessionRecord) async -> Void

    private let hooks = Mutex<(credentials: [CredentialHook], sessions: [SessionHook])>(([], []))

    /// Creates an empty set.
    package init() {}

    /// Adds a hook for credential changes.
    public func onCredentialChange(_ hook: @escaping CredentialHook) { hooks.withLock { $0.credentials.append(hook) } }

    /// Adds a hook for ended sessions.
    public func onSessionEnd(_ hook: @escaping SessionHook) { hooks.withLock { $0.sessions.append(hook) } }

    /// Tells the hooks that `credential` of `userID` changed (a provider calls this after setting,
    /// changing or removing one).
    public func credentialChanged(_ userID: UUID, credential: String) async {
        for hook in hooks.withLock({ $0.credentials }) { await hook(userID, credential) }
    }

    /// Tells the hooks that these sessions ended.
    package func sessionsEnded(_ sessions: [SessionRecord]) async {
        let hooks = self.hooks.withLock { $0.sessions }
        guard !hooks.isEmpty else { return }
        for session in sessions { for hook in hooks { await hook(session) } }
    }
}
