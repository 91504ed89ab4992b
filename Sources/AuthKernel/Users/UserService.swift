public import AuthStorage
public import Foundation
package import Logging

/// Users and their linked identities: find-or-create by identity, linking, profile changes, deletion.
public struct UserService: Sendable {
    let store: any AuthStore
    let clock: any AuthClock
    let logger: Logger
    let notices: SignInMethodNotices?
    /// `auth.fresh_auth`: linking needs a session this fresh.
    let freshAuth: Int
    /// What providers take away when an account is recovered.
    public let recovery: AccountRecoveryHooks
    /// How providers take away a credential of theirs that a "Not you?" link names.
    public let removals = CredentialRemovals()
    /// Where `user.created` and `user.deleted` go (webhooks).
    let events: AccountEvents?
    /// Who may make an account; the kernel sets it from `signup`.
    package var signup = SignupPolicy()

    /// Creates the service.
    /// - Parameter notices: mails the owner when a sign-in method is added to an account; nil mails nothing.
    package init(
        store: any AuthStore, clock: any AuthClock, logger: Logger, notices: SignInMethodNotices? = nil,
        recovery: AccountRecoveryHooks = AccountRecoveryHooks(), freshAuth: Int = 600, events: AccountEvents? = nil
    ) {
        self.events = events
        self.freshAuth = freshAuth
        self.store = store
        self.clock = clock
        self.logger = logger
        self.notices = notices
        self.recovery = recovery
    }

    /// What a provider proved about the person signing in.
    public struct Claim: Sendable {
        /// The identity.
        public var identity: Identity
        /// Case-folded email the provider vouches for, if any.
        public var email: String?
        /// Whether the provider verified that email.
        public var emailVerified: Bool

        /// Creates a claim.
        public init(identity: Identity, email: String?, emailVerified: Bool) {
            self.identity = identity
            self.email = email
            self.emailVerified = emailVerified
        }
    }

    /// The user with this id.
    public func user(id: UUID) async throws -> UserRecord? { try await store.read([.user(id)]) { $0.user(id: id) } }
    /// The user an identity (provider and subject) belongs to, if any.
    public func user(identity: Identity) async throws -> UserRecord? {
        try await store.read([.userByIdentity(identity)]) { $0.user(identity: identity) }
    }
    /// The user with this (case-folded) email.
    public func user(email: String) async throws -> UserRecord? { try await store.read([.userByEmail(email)]) { $0.user(email: email) } }
    /// The user with this user name, compared case-insensitively.
    public func user(username: String) async throws -> UserRecord? {
        try await store.read([.userByUsername(username)]) { $0.user(username: username) }
    }
    /// One page of users in id order for the admin API (see ``StoreState/users(matching:after:limit:)``).
    package func page(matching query: String, after: UUID?, limit: Int) async throws -> [UserRecord] {
        try await store.read([.usersPage(query: query, after: after, limit: limit)]) { $0.users(matching: query, after: after, limit: limit) }
    }

    /// Finds or creates the user for a sign-in, or links the identity to `linkingTo`.
    ///
    /// Without `linkingTo`: the identity's user if linked; else, when the provider verified the email and
    /// a user with that email exists whose email is verified too, that user, with the identity linked
    /// (proving the address proves the account); else a new user. A verified claim beats an unverified
    /// one: a user holding the address unverified loses it to the new user (no pre-registered squatting).
    /// An unverified claim on an address another user holds creates the new user without the email.
    /// With `linkingTo` (the caller's Bearer session): the identity is added to that user, which
    /// stops being anonymous; 409 `IDENTITY_IN_USE` if the identity or its email belongs to someone else;
    /// 403 `REAUTH_REQUIRED` unless the session is fresh (linking adds a way in, which a stolen
    /// access token must not be enough for).
    ///
    /// A new account, or an anonymous one's first identity, is a sign-up: 403 `SIGNUP_CLOSED` where
    /// ``SignupPolicy`` (`kernel.signup`) does not allow it. A pending invitation of the verified
    /// email allows it, and the account takes the invitation's groups and name.
    public func signIn(_ claim: Claim, linkingTo principal: Principal?) async throws -> UserRecord {
        if let principal { try FreshSession.require(principal, now: clock.now(), within: freshAuth) }
        return try await signIn(claim, linkingToUser: principal?.user.id)
    }

    /// ``signIn(_:linkingTo:)`` with the user to link to named by id, without the freshness check.
    /// `operatorInvited`: an operator's own invitation (`authd admins invite`) makes the account
    /// whatever `signup.mode` says, as any invitation does.
    package func signIn(_ claim: Claim, linkingToUser linkUserID: UUID?, operatorInvited: Bool = false) async throws -> UserRecord {
        let now = clock.now()
        // A new account's language is what the browser or app asked for first (contract §18).
        let locale = RequestLanguage.current?.preferred
        var keys: [StoreKey] = [.userByIdentity(claim.identity)]
        if let email = claim.email { keys += [.userByEmail(email), .code(purpose: Invitations.purpose, key: email)] }
        if let linkUserID { keys.append(.user(linkUserID)) }
        let signup = self.signup
        // A sign-up the policy allows, taking the invitation of a verified email; else SIGNUP_CLOSED.
        @Sendable func signUp(_ user: inout UserRecord, _ state: inout StoreState) throws {
            let invited = claim.emailVerified ? claim.email.flatMap { Invitations.take(email: $0, in: &state, now: now) } : nil
            guard invited != nil || operatorInvited || signup.permits(email: claim.email, emailVerified: claim.emailVerified) else {
                throw AuthError.signupClosed
            }
            if let invited {
                user.groups = Array(Set(user.groups + invited.groups)).sorted()
                if user.displayName == nil { user.displayName = invited.displayName }
            }
        }
        let (user, created, linkedTo) = try await store.write(keys) { state -> (UserRecord, Bool, UserRecord?) in
            let owner = state.user(identity: claim.identity)
            if let linkUserID {
                guard var user = state.user(id: linkUserID) else { throw AuthError.unauthorized }
                if let owner, owner.id != user.id { throw AuthError.identityInUse }
                // An anonymous account's first identity makes it an account like any other: a sign-up.
                // (A PIN or a passkey on it first changes nothing: it stays anonymous until an identity
                // with an address, or an upstream's, is linked.)
                if user.isAnonymous, owner == nil { try signUp(&user, &state) }
                if let email = claim.email, var emailOwner = state.user(email: email), emailOwner.id != user.id {
                    // A verified claim takes the address from a holder who never proved it, as a sign-in does.
                    guard claim.emailVerified, !emailOwner.emailVerified else { throw AuthError.identityInUse }
                    Self.takeEmail(email, from: &emailOwner, now: now)
                    state.put(emailOwner)
                }
                let before = user
                Self.link(claim, to: &user, now: now)
                state.put(user)
                return (user, false, before)
            }
            if var owner {
                if let email = claim.email, claim.emailVerified, owner.email == email, !owner.emailVerified {
                    owner.emailVerified = true
                    owner.updatedAt = now
                    state.put(owner)
                }
                return (owner, false, nil)
            }
            var email = claim.email
            if let address = claim.email, var emailOwner = state.user(email: address) {
                if claim.emailVerified, emailOwner.emailVerified {
                    let before = emailOwner
                    Self.link(claim, to: &emailOwner, now: now)
                    state.put(emailOwner)
                    return (emailOwner, false, before)
                }
                if claim.emailVerified {
                    Self.takeEmail(address, from: &emailOwner, now: now)
                    state.put(emailOwner)
                } else {
                    email = nil
                }
            }
            var user = UserRecord(
                email: email, emailVerified: email != nil && claim.emailVerified,
                identities: [claim.identity], createdAt: now
            )
            user.locale = locale
            try signUp(&user, &state)
            state.put(user)
            return (user, true, nil)
        }
        if created {
            logger.info("user created", metadata: ["user.id": "\(user.id.lowercased)", "provider": "\(claim.identity.provider)"])
            await events?.emit("user.created", AccountEvents.data(user))
        }
        if let before = linkedTo { await notices?.notify(before: before, added: user.identities.filter { !before.identities.contains($0) }) }
        return user
    }

    /// The unverified holder of `address` loses it, and with it every identity keyed by the address
    /// and its credential (a password squatted on it): left behind, they would block the owner's
    /// password with 409.
    private static func takeEmail(_ address: String, from holder: inout UserRecord, now: Date) {
        holder.email = nil
        holder.emailVerified = false
        let squatted = holder.identities.filter { $0.subject == address }
        holder.identities.removeAll { $0.subject == address }
        for identity in squatted where !holder.identities.contains(where: { $0.provider == identity.provider }) {
            holder.secrets[identity.provider] = nil
        }
        holder.updatedAt = now
    }

    private static func link(_ claim: UserService.Claim, to user: inout UserRecord, now: Date) {
        if !user.identities.contains(claim.identity) { user.identities.append(claim.identity) }
        if let email = claim.email {
            if user.email == nil { user.email = email; user.emailVerified = claim.emailVerified }
            else if user.email == email, claim.emailVerified { user.emailVerified = true }
        }
        user.isAnonymous = false
        user.updatedAt = now
    }

    /// Creates a user with no identity yet (anonymous sign-in).
    /// - Throws: 403 `SIGNUP_CLOSED` unless `signup.anonymous` allows it.
    public func createAnonymous() async throws -> UserRecord {
        guard signup.allowsAnonymous else { throw AuthError.signupClosed }
        var user = UserRecord(isAnonymous: true, createdAt: clock.now())
        user.locale = RequestLanguage.current?.preferred
        try await store.write([]) { [user] in $0.put(user) }
        logger.info("anonymous user created", metadata: ["user.id": "\(user.id.lowercased)"])
        await events?.emit("user.created", AccountEvents.data(user))
        return user
    }

    /// Changes a user atomically. `body` may throw before changing anything to refuse.
    /// Email and user-name uniqueness are checked after `body`; a clash throws 409 (`IDENTITY_IN_USE`
    /// for email, `USERNAME_TAKEN` for user names) and nothing changes.
    public func update(_ userID: UUID, _ body: @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord {
        try await modify(userID) { try body(&$0) }.user
    }

    /// Like ``update(_:_:)``, but `body` returns a value, and the changes it made are kept even when the
    /// value says the operation failed: e.g. a wrong PIN is answered 401 *and* its failure is counted.
    /// When `body` throws, nothing changes. An unchanged user is not written.
    /// - Parameters:
    ///   - userID: the user to change.
    ///   - durability: `.eventual` answers before the change is on disk (for failure counters; see `WriteDurability`).
    ///   - body: the change, with the user as stored now.
    public func change<R: Sendable>(
        _ userID: UUID, durability: WriteDurability = .synced, _ body: @Sendable (inout UserRecord) throws -> R
    ) async throws -> R {
        try await modify(userID, durability: durability, body).result
    }

    /// Returns once every change made so far is on disk (after ``change(_:durability:_:)`` with `.eventual`).
    public func waitUntilDurable() async throws {
        try await store.waitUntilDurable()
    }

    private func modify<R: Sendable>(
        _ userID: UUID, durability: WriteDurability = .synced, _ body: @Sendable (inout UserRecord) throws -> R
    ) async throws -> (user: UserRecord, result: R) {
        let now = clock.now()
        // Email, user name and identity clashes with users not loaded here are refused by the store's
        // uniqueness rules (a database's constraints) with the same 409s.
        let (user, result, original) = try await store.write([.user(userID)], durability: durability) { state in
            guard let original = state.user(id: userID) else { throw AuthError.unauthorized }
            var user = original
            let result = try body(&user)
            guard user != original else { return (user, result, original) }
            if let email = user.email, let other = state.user(email: email), other.id != userID { throw AuthError.identityInUse }
            if let name = user.username, let other = state.user(username: name), other.id != userID {
                throw AuthError.usernameTaken
            }
            for identity in user.identities {
                if let other = state.user(identity: identity), other.id != userID { throw AuthError.identityInUse }
            }
            user.updatedAt = now
            state.put(user)
            return (user, result, original)
        }
        if user.identities != original.identities {
            await notices?.notify(before: original, added: user.identities.filter { !original.identities.contains($0) })
        }
        return (user, result)
    }

    /// Deletes anonymous users without any identity (no way to sign in as them again) once they have
    /// changed nothing and had no live session for `seconds`, with their expired sessions.
    /// - Returns: how many were deleted.
    @discardableResult
    public func purgeAnonymous(idleFor seconds: Int) async throws -> Int {
        let cutoff = clock.now().addingTimeInterval(-TimeInterval(seconds))
        let deleted = try await StorePurge.run(store) { part in
            try await store.write([.anonymousUsersIdle(before: cutoff)]) { state -> Int in
                var idle: [UUID] = []
                state.users.forEachValue(inShards: part) { user in
                    guard user.isAnonymous, user.identities.isEmpty, user.updatedAt < cutoff,
                        state.sessions(userID: user.id).allSatisfy({ $0.expiresAt <= cutoff })
                    else { return }
                    idle.append(user.id)
                }
                for id in idle { state.deleteUser(id: id) }
                return idle.count
            }
        }
        if deleted > 0 { logger.info("idle anonymous users purged", metadata: ["users": "\(deleted)"]) }
        return deleted
    }

    /// Mails the owner of a non-anonymous account with a verified email that `method` (as a person
    /// would name it, e.g. "an API key") was added to it.
    /// `credential` is what the notice's "Not you?" link takes away.
    public func noticeMethodAdded(_ user: UserRecord, method: String, credential: AddedCredential) async {
        await notices?.notify(user, methods: [method], credentials: [credential])
    }

    /// Deletes a user with its identities, sessions and codes.
    package func delete(_ userID: UUID) async throws {
        let now = clock.now()
        try await store.write([.user(userID), .sessionsOfUser(userID), .approvalsOfUser(userID)]) { state in
            // Its API keys say `revoked` from now on rather than `unknown`.
            for key in state.sessions(userID: userID) where key.isAPIKey { SessionService.end(key, in: &state, now: now) }
            state.deleteUser(id: userID)
        }
        logger.info("user deleted", metadata: ["user.id": "\(userID.lowercased)"])
        await events?.emit("user.deleted", ["user_id": .string(userID.lowercased)])
    }
}
