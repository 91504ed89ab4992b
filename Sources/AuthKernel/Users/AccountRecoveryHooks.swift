public import AuthStorage
import Synchronization

/// What providers take away when an account is recovered (a password reset by email code or by
/// another device): credentials that someone who once held a session could have planted, such as
/// a PIN set with a stolen access token, must not outlive the owner taking the account back.
///
/// A hook changes the user inside the same write that sets the new password and returns what it
/// removed for the confirmation mail: the key of a catalog sentence (`pin.recovery.removed`, "the
/// PIN"), worded in the mail's language, or a short phrase as it is; nil when it removed nothing.
public final class AccountRecoveryHooks: Sendable {
    /// Removes what must not survive recovery from `user`; returns what it removed, for the mail.
    public typealias Hook = @Sendable (inout UserRecord) -> String?
    private let hooks = Mutex<[Hook]>([])

    /// Creates an empty list.
    public init() {}

    /// Adds a hook.
    public func register(_ hook: @escaping Hook) { hooks.withLock { $0.append(hook) } }

    /// Runs every hook on `user`, in registration order; returns what they removed.
    public func apply(to user: inout UserRecord) -> [String] {
        hooks.withLock { $0 }.compactMap { $0(&user) }
    }
}
