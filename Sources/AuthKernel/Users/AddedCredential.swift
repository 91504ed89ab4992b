public import AuthStorage
import Synchronization
public import Foundation

/// What a "new way to sign in" notice names, so that its "Not you?" link can take exactly that away
/// (contract §12): a linked identity, a session the user made (an API key, a device signed in), or
/// a provider's own credential (a TOTP app, a passkey) that the provider removes through
/// ``CredentialRemovals``.
public enum AddedCredential: Sendable, Equatable {
    /// An identity linked to the account (a password, an Apple ID, an email sign-in, a PIN).
    case identity(Identity)
    /// A session the user made: an API key or a device signed in with a code.
    case session(UUID)
    /// A provider's own credential: `kind` names the removal the provider registered, `reference`
    /// which one (a passkey's id; empty for the one TOTP app).
    case provided(kind: String, reference: String)

    /// As the "Not you?" token's payload keeps it.
    var payload: [String: JSONValue] {
        switch self {
        case .identity(let identity): ["type": .string("identity"), "provider": .string(identity.provider), "subject": .string(identity.subject)]
        case .session(let id): ["type": .string("session"), "id": .string(id.lowercased)]
        case .provided(let kind, let reference): ["type": .string("provided"), "kind": .string(kind), "reference": .string(reference)]
        }
    }

    package init?(payload: [String: JSONValue]) {
        switch payload["type"] {
        case .string("identity"):
            guard case .string(let provider)? = payload["provider"], case .string(let subject)? = payload["subject"] else { return nil }
            self = .identity(Identity(provider: provider, subject: subject))
        case .string("session"):
            guard case .string(let id)? = payload["id"], let uuid = UUID(uuidString: id) else { return nil }
            self = .session(uuid)
        case .string("provided"):
            guard case .string(let kind)? = payload["kind"], case .string(let reference)? = payload["reference"] else { return nil }
            self = .provided(kind: kind, reference: reference)
        default:
            return nil
        }
    }
}

/// How providers take away a credential of theirs when its owner answers a notice with "Not you?".
///
/// ```swift
/// kernel.users.removals.register(kind: Self.id) { user, _ in
///     for key in [TOTPEnrollment.key, RecoveryCodes.key, FactorLock.key] { user.secrets[key] = nil }
/// }
/// ```
public final class CredentialRemovals: Sendable {
    /// Removes the credential `reference` names from `user`, inside the store write that ends the
    /// account's sessions.
    public typealias Removal = @Sendable (inout UserRecord, _ reference: String) -> Void
    private let removals = Mutex<[String: Removal]>([:])

    /// Creates an empty list.
    public init() {}

    /// Registers the removal of credentials of `kind`.
    public func register(kind: String, _ removal: @escaping Removal) { removals.withLock { $0[kind] = removal } }

    /// The removal of `kind`, when one is registered.
    package func removal(_ kind: String) -> Removal? { removals.withLock { $0[kind] } }
}
