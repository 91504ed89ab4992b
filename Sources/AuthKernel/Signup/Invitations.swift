package import AuthStorage
package import Foundation

/// Invitations (contract §17): an operator or a backend invites an address, with its groups and a
/// display name. The invitation is a record under the address; its link is a single-use token
/// (``SingleUseTokens``, seven days) mailed to the address and shown once to whoever made it.
///
/// The link alone never makes an account or signs anyone in: whoever made it has seen it. The
/// page it opens mails a code to the address and makes the account once the code comes back
/// (unless the operator vouched for the address, audited). A sign-up by mailed code at the
/// address takes the invitation too, as does any new account whose verified email it names:
/// ``take(email:in:now:)`` runs in the write that makes the account.
package struct Invitations: Sendable {
    let store: any AuthStore
    let tokens: SingleUseTokens
    let clock: any AuthClock

    /// The record's purpose (its key: the case-folded address) and the link's.
    package static let purpose = "invitation", linkPurpose = "invitation.link"
    /// How long an invitation and its link work.
    package static let lifetime = 7 * 86_400
    /// The mail the invited address gets.
    package static let template = "kernel.invitation"

    /// Creates the service.
    package init(store: any AuthStore, tokens: SingleUseTokens, clock: any AuthClock) {
        self.store = store
        self.tokens = tokens
        self.clock = clock
    }

    /// One pending invitation.
    package struct Invitation: Sendable, Equatable {
        /// Its id (the admin API's `invitation_id`).
        package var id: String
        /// The invited address, case-folded.
        package var email: String
        /// The groups the account gets.
        package var groups: [String]
        /// The display name it gets, if any.
        package var displayName: String?
        /// Who invited: an operator's address, a service key's name, `authd users invite`.
        package var invitedBy: String
        /// Whether the operator vouched for the address: the link then makes the account without a mailed code.
        package var vouched: Bool
        /// When it stops working.
        package var expiresAt: Date

        init?(_ record: CodeRecord) {
            guard let p = record.payload, case .string(let id)? = p["id"], case .string(let by)? = p["invited_by"] else { return nil }
            var groups: [String] = []
            if case .array(let items)? = p["groups"] { groups = items.compactMap { if case .string(let g) = $0 { g } else { nil } } }
            var name: String?
            if case .string(let n)? = p["display_name"] { name = n }
            var vouched = false
            if case .bool(let v)? = p["vouched"] { vouched = v }
            (self.id, email, self.groups, displayName, invitedBy, self.vouched, expiresAt) = (id, record.key, groups, name, by, vouched, record.expiresAt)
        }
    }

    /// The pending invitation of `email`, if one lives.
    package static func pending(email: String, in store: any AuthStore, now: Date) async throws -> Invitation? {
        try await store.read([.code(purpose: purpose, key: email)]) { state in
            state.code(purpose: purpose, key: email).flatMap { $0.expiresAt > now ? Invitation($0) : nil }
        }
    }

    /// Inside the write that makes an account for `email` (verified): its pending invitation, used
    /// up. The caller gives the account its groups and name.
    package static func take(email: String, in state: inout StoreState, now: Date) -> Invitation? {
        guard let record = state.code(purpose: purpose, key: email) else { return nil }
        state.deleteCode(id: record.id)
        return record.expiresAt > now ? Invitation(record) : nil
    }

    /// Invites `email` (an invitation already pending for it is replaced, its link ended).
    /// - Returns: the invitation and its link's token (to mail and to show once).
    package func invite(email: String, groups: [String], displayName: String?, by inviter: String, vouched: Bool) async throws -> (Invitation, String) {
        let now = clock.now(), id = "inv_" + Base64URL.encode(SecureRandom.bytes(12))
        _ = try await tokens.revokeAll(purpose: Self.linkPurpose, subject: email)
        var payload: [String: JSONValue] = [
            "id": .string(id), "groups": .array(groups.map { .string($0) }), "invited_by": .string(inviter), "vouched": .bool(vouched),
        ]
        if let displayName { payload["display_name"] = .string(displayName) }
        let record = CodeRecord(
            purpose: Self.purpose, key: email, digest: "", sentAt: now, expiresAt: now.addingTimeInterval(TimeInterval(Self.lifetime)), payload: payload)
        try await store.write([.code(purpose: Self.purpose, key: email)]) { $0.put(record) }
        let token = try await tokens.issue(purpose: Self.linkPurpose, subject: email, ttl: Self.lifetime, payload: ["id": .string(id)])
        return (Invitation(record)!, token)
    }

    /// The pending invitations, soonest to expire first.
    package func list() async throws -> [Invitation] {
        let now = clock.now()
        return try await store.read([.codesOfPurpose(Self.purpose)]) { state in
            state.codes(purpose: Self.purpose).filter { $0.expiresAt > now }.compactMap(Invitation.init).sorted { $0.expiresAt < $1.expiresAt }
        }
    }

    /// Ends the invitation with this id and its link; false when there is none.
    package func revoke(id: String) async throws -> Bool {
        guard let found = try await list().first(where: { $0.id == id }) else { return false }
        try await store.write([.code(purpose: Self.purpose, key: found.email)]) { $0.deleteCode(id: CodeRecord.id(purpose: Self.purpose, key: found.email)) }
        _ = try await tokens.revokeAll(purpose: Self.linkPurpose, subject: found.email)
        return true
    }

    /// Ends the invitation of `email` and its links (it was used by an account that exists).
    package func end(email: String) async throws {
        try await store.write([.code(purpose: Self.purpose, key: email)]) { $0.deleteCode(id: CodeRecord.id(purpose: Self.purpose, key: email)) }
        _ = try await tokens.revokeAll(purpose: Self.linkPurpose, subject: email)
    }

    /// The invitation a link names, while both live, spending nothing.
    package func opened(token: String) async throws -> Invitation? {
        guard let link = try await tokens.peek(purpose: Self.linkPurpose, token: token), case .string(let id)? = link.payload["id"],
            let invitation = try await Self.pending(email: link.subject, in: store, now: clock.now()), invitation.id == id
        else { return nil }
        return invitation
    }

    /// Spends a link: the invitation it names, once.
    package func redeem(token: String) async throws -> Invitation? {
        guard let link = try await tokens.redeem(purpose: Self.linkPurpose, token: token), case .string(let id)? = link.payload["id"],
            let invitation = try await Self.pending(email: link.subject, in: store, now: clock.now()), invitation.id == id
        else { return nil }
        return invitation
    }

    /// The code the invitation's page mails to prove the address.
    package static let codeTemplate = "kernel.invitation_code"
    package static let codeMail = MailTemplate.code(catalog: "kernel.mail.invitation_code")

    /// The invitation mail: the kernel catalog's `kernel.mail.invitation.*` sentences.
    package static let mail = MailTemplate(
        subject: "[[kernel.mail.invitation.subject]]",
        text: """
            [[kernel.mail.invitation.invited]]

            [[kernel.mail.invitation.open_link]]
            {{link}}

            [[kernel.mail.invitation.unexpected]]
            """,
        html: """
            <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
            <p>[[kernel.mail.invitation.invited]]</p>
            <p>[[kernel.mail.invitation.make_account]]</p>
            <p>[[kernel.mail.invitation.unexpected]]</p>
            </body></html>
            """)
}
