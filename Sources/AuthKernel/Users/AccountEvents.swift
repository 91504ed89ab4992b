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

    /// Called with each event of contract §9 (`user.created`, `session.ended`, …) and its data: what
    /// webhooks deliver. The data never holds a token, code, PIN, password or secret.
    public typealias EventHook = @Sendable (_ type: String, _ data: [String: JSONValue]) async -> Void

    private let hooks = Mutex<(credentials: [CredentialHook], sessions: [SessionHook], events: [EventHook])>(([], [], []))

    /// Creates an empty set.
    package init() {}

    /// Adds a hook for credential changes.
    public func onCredentialChange(_ hook: @escaping CredentialHook) { hooks.withLock { $0.credentials.append(hook) } }

    /// Adds a hook for every event (the webhooks).
    public func onEvent(_ hook: @escaping EventHook) { hooks.withLock { $0.events.append(hook) } }

    /// Tells the event hooks that `type` happened; a provider may emit its own types (`totp.enabled`).
    public func emit(_ type: String, _ data: [String: JSONValue]) async {
        let hooks = self.hooks.withLock { $0.events }
        for hook in hooks { await hook(type, data) }
    }

    /// Whether anyone listens to events: callers skip building the data when nobody does.
    package var hasEventHooks: Bool { hooks.withLock { !$0.events.isEmpty } }

    /// Adds a hook for ended sessions.
    public func onSessionEnd(_ hook: @escaping SessionHook) { hooks.withLock { $0.sessions.append(hook) } }

    /// Tells the hooks that `credential` of `userID` changed (a provider calls this after setting,
    /// changing or removing one).
    public func credentialChanged(_ userID: UUID, credential: String) async {
        for hook in hooks.withLock({ $0.credentials }) { await hook(userID, credential) }
        if credential == "password" { await emit("password.changed", ["user_id": .string(userID.lowercased)]) }
    }

    /// Tells the hooks that these sessions ended.
    package func sessionsEnded(_ sessions: [SessionRecord]) async {
        let (hooks, events) = self.hooks.withLock { ($0.sessions, !$0.events.isEmpty) }
        for session in sessions { for hook in hooks { await hook(session) } }
        guard events else { return }
        for session in sessions {
            await emit(session.isAPIKey ? "api_key.revoked" : "session.ended", Self.data(session))
        }
    }

    /// A session's event data: ids and labels, never a token.
    package static func data(_ session: SessionRecord) -> [String: JSONValue] {
        var data: [String: JSONValue] = [
            "user_id": .string(session.userID.lowercased), "session_id": .string(session.id.lowercased), "amr": .array(session.amr.map { .string($0) }),
        ]
        if let name = session.deviceName { data["device_name"] = .string(name) }
        if let platform = session.platform { data["platform"] = .string(platform) }
        if let prefix = session.keyPrefix { data["key_prefix"] = .string(prefix) }
        return data
    }

    /// A user's event data: who, never a secret.
    package static func data(_ user: UserRecord) -> [String: JSONValue] {
        var data: [String: JSONValue] = ["user_id": .string(user.id.lowercased), "is_anonymous": .bool(user.isAnonymous)]
        if let email = user.email { data["email"] = .string(email) }
        data["auth_providers"] = .array(user.authProviders.map { .string($0) })
        return data
    }
}
