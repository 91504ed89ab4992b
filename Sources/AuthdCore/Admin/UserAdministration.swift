import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Logging

/// What an operator does to a user, the same whether a service key asks (the admin API) or an
/// operator in the console: the same checks, events and audit, with who did it.
struct UserAdministration: Sendable {
    let kernel: Kernel

    /// Who made a change, for the audit log.
    struct Actor: Sendable {
        /// `admin_api` (a service key) or `admin_console` (an operator).
        var event: String
        /// The service key's name or the operator's email.
        var account: String
    }

    /// What a change sets; nil leaves a field as it is.
    struct Change: Sendable {
        var appMetadata: JSONValue?
        var displayName: String??
        var disabled: Bool?
        /// The whole list of groups (contract §17).
        var groups: [String]?
    }

    /// Checks and applies `change`: `app_metadata` as the contract bounds it, a display name, the
    /// disabled state (disabling ends every session and API key), the groups. Emits `user.updated`.
    func update(_ user: UserRecord, _ change: Change, by actor: Actor) async throws -> UserRecord {
        let metadata = try change.appMetadata.map { try UserMetadata.validate($0, field: "app_metadata", maxBytes: UserMetadata.maxAppBytes) }
        let name = try change.displayName.map { try DisplayName.validate($0) }
        let groups = try change.groups.map { try UserGroups.validate($0) }
        let now = kernel.clock.now()
        let updated = try await kernel.users.update(user.id) { user in
            if let metadata { user.appMetadata = metadata }
            if let name { user.displayName = name }
            if let disabled = change.disabled { user.disabledAt = disabled ? (user.disabledAt ?? now) : nil }
            if let groups { user.groups = groups }
        }
        // Disabling ends every session and API key; the sign-ins that follow answer ACCOUNT_DISABLED.
        if change.disabled == true { try await kernel.sessions.revokeAll(of: user.id) }
        await kernel.events.emit("user.updated", AccountEvents.data(updated))
        let changed = [
            metadata.map { _ in "app_metadata" }, name.map { _ in "display_name" }, change.disabled.map { $0 ? "disabled" : "enabled" },
            groups.map { "groups [\($0.joined(separator: ", "))]" },
        ]
        await kernel.audit.record(actor.event, user: user.id, account: actor.account, reason: "update user: " + changed.compactMap { $0 }.joined(separator: ", "))
        return updated
    }

    /// A way to sign in an operator can take away: a second factor by its name (`passkey`,
    /// `totp`…), or `password`.
    static let passwordCredential = "password"

    /// Removes every enrollment of the second factor `name` (all passkeys; the authenticator app
    /// with its recovery codes), or the password, from `user`: audited, announced as a credential
    /// change, and the owner mailed. The person's sessions stay.
    /// - Returns: false when the account had none.
    func removeCredential(_ name: String, from user: UserRecord, by actor: Actor) async throws -> Bool {
        let factor = kernel.signInHooks.factor(named: name)
        guard factor != nil || name == Self.passwordCredential else { throw AuthError.notFound("There is no such way to sign in.") }
        let removed = try await kernel.users.change(user.id) { user -> Bool in
            let before = user
            if let factor {
                // Only what the person enrolled: a factor offered to everyone (an approval, a
                // mailed code) has nothing of theirs to take away.
                guard !factor.enrollments(for: user).isEmpty else { return false }
                factor.removeAll(from: &user)
            } else {
                user.secrets[Self.passwordCredential] = nil
                user.identities.removeAll { $0.provider == Self.passwordCredential }
            }
            return user.secrets != before.secrets || user.identities != before.identities
        }
        guard removed else { return false }
        await kernel.audit.record(actor.event, user: user.id, account: actor.account, reason: "remove credential: \(name)")
        await kernel.events.credentialChanged(user.id, credential: name)
        if let email = user.email {
            // In the owner's language, not the operator's.
            try? await CredentialRemovalNotice.send(
                removed: name, at: kernel.clock.now(), to: email, account: kernel.config.issuer + "/account", mailer: kernel.mailer)
        }
        return true
    }

    /// The heading the console gives a way to sign in.
    static func title(_ name: String) -> String {
        switch name {
        case "passkey": "Passkeys"
        case "totp": "Authenticator app"
        case "recovery_code": "Recovery codes"
        case passwordCredential: "Password"
        default: name
        }
    }

    /// Makes an account for `email` (an operator's, whatever `signup.mode` says): the address as
    /// its `email` identity, verified when the operator vouches for it, with a name and groups.
    /// Emits `user.created` and audits who made it.
    /// - Throws: 400 for a malformed address, name or group; 409 `EMAIL_IN_USE` when an account
    ///   holds the address already.
    func create(email raw: String, displayName: String?, groups: [String], emailVerified: Bool, in store: any AuthStore, by actor: Actor) async throws -> UserRecord {
        guard let email = EmailAddress(raw) else { throw AuthError.invalidEmail }
        let name = try DisplayName.validate(displayName)
        let groups = try UserGroups.validate(groups)
        let identity = Identity(provider: "email", subject: email.value)
        var user = UserRecord(email: email.value, emailVerified: emailVerified, displayName: name, identities: [identity], createdAt: kernel.clock.now())
        user.groups = groups
        let made = user
        try await store.write([.userByEmail(email.value), .userByIdentity(identity)]) { state in
            guard state.user(email: email.value) == nil, state.user(identity: identity) == nil else { throw Self.emailInUse(email.value) }
            state.put(made)
        }
        kernel.logger.info("user created", metadata: ["user.id": "\(made.id.lowercased)", "provider": "admin"])
        await kernel.events.emit("user.created", AccountEvents.data(made))
        await kernel.audit.record(
            actor.event, user: made.id, account: actor.account,
            reason: "create user \(email.value)\(emailVerified ? " (verified)" : "") groups [\(groups.joined(separator: ", "))]")
        return made
    }

    static func emailInUse(_ email: String) -> AuthError {
        AuthError(status: .conflict, code: "EMAIL_IN_USE", message: "An account with \(email) exists already: find it in the list, or use another address.")
    }

    /// Deletes the user as `DELETE /account` does: identities, sessions, codes, the deletion hooks.
    func delete(_ user: UserRecord, by actor: Actor) async throws {
        await kernel.accountDeletion.run(for: user)
        try await kernel.users.delete(user.id)
        await kernel.audit.record(actor.event, user: user.id, account: actor.account, reason: "delete user")
        await kernel.audit.record("account_deleted", user: user.id)
    }

    /// Ends every session and API key of the user.
    func endSessions(of user: UserRecord, by actor: Actor) async throws {
        try await kernel.sessions.revokeAll(of: user.id)
        await kernel.audit.record(actor.event, user: user.id, account: actor.account, reason: "end sessions")
    }
}
