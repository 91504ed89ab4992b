public import AuthStorage
import Synchronization

/// What providers do before an account is deleted (e.g. revoke a third party's tokens).
/// Hooks must not block the deletion: they record work (``JobQueue``) and return.
public final class AccountDeletionHooks: Sendable {
    /// Called with the user about to be deleted.
    public typealias Hook = @Sendable (UserRecord) async -> Void
    private let hooks = Mutex<[Hook]>([])

    /// Creates an empty list.
    public init() {}

    /// Adds a hook.
    public func register(_ hook: @escaping Hook) { hooks.withLock { $0.append(hook) } }

    /// Runs every hook, in registration order.
    public func run(for user: UserRecord) async {
        for hook in hooks.withLock({ $0 }) { await hook(user) }
    }
}
