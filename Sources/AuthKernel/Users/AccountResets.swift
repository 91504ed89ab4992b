public import AuthStorage
import Synchronization

/// The ways an operator can start an account's recovery for its owner: the console's "send a
/// reset". A provider whose credential can be reset by mail registers one; the console offers each,
/// named as the provider names it.
///
/// The password provider's, which mails the code `password/reset/email/verify` takes (issuing one
/// throws 429 while the last is fresh):
///
/// ```swift
/// kernel.resets.register("the password") { [kernel] user in
///     guard let email = user.email, user.secret(Self.id, as: PasswordCredential.self) != nil else { return false }
///     let code = try await kernel.codes.issue(purpose: Self.resetPurpose, key: email, policy: codes)
///     try await kernel.mailer.send(template: PasswordMail.reset, to: email, code: code, lifetime: codes.ttl)
///     return true
/// }
/// ```
public final class AccountResets: Sendable {
    /// Mails `user`'s owner the way to reset; false when the account has nothing of this kind to reset.
    public typealias Sender = @Sendable (_ user: UserRecord) async throws -> Bool
    private let senders = Mutex<[(name: String, send: Sender)]>([])

    /// Creates an empty list.
    public init() {}

    /// Adds a way to reset, named as a person reads it ("the password").
    public func register(_ name: String, _ send: @escaping Sender) {
        senders.withLock { $0.append((name, send)) }
    }

    /// The ways registered, in order.
    package var all: [(name: String, send: Sender)] { senders.withLock { $0 } }
}
