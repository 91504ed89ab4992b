import AuthKernel
import AuthStorage
import Foundation

/// Invites a person the same way whoever asks (`authd users invite`, the console, the admin API):
/// the same checks, the mail with the link, the audit line (contract §17).
struct InvitationSender: Sendable {
    let kernel: Kernel

    /// The page an invitation's link opens.
    static let path = "/invitation"

    /// A made invitation and its link, shown once to whoever made it.
    struct Made: Sendable {
        var invitation: Invitations.Invitation
        var url: String

        /// `{"invitation_id","url","expires_at"}`: what the admin API and the CLI answer.
        var json: JSONWriter {
            var w = JSONWriter(capacity: 384)
            w.beginObject()
            w.key("invitation_id"); w.string(invitation.id)
            w.key("url"); w.string(url)
            w.key("expires_at"); w.string(Timestamp.string(invitation.expiresAt))
            w.endObject()
            return w
        }
    }

    /// Checks the address, groups and name, replaces a pending invitation of the address, mails the
    /// link and audits who invited. `vouched`: the operator vouches for the address, and the link
    /// makes the account without a mailed code (the CLI only).
    func invite(email raw: String, groups: [String], displayName: String?, by actor: UserAdministration.Actor, vouched: Bool = false) async throws -> Made {
        guard let email = EmailAddress(raw) else { throw AuthError.invalidEmail }
        let groups = try UserGroups.validate(groups)
        let name = try DisplayName.validate(displayName)
        let (invitation, token) = try await kernel.invitations.invite(email: email.value, groups: groups, displayName: name, by: actor.account, vouched: vouched)
        let url = kernel.issuer + Self.path + "?token=" + token
        try await kernel.mailer.send(
            template: Invitations.template, to: email.value, values: ["inviter": actor.account, "email": email.value, "link": url])
        let how = vouched ? "invite (vouched: no mail check)" : "invite"
        await kernel.audit.record(actor.event, account: actor.account, reason: "\(how) \(email.value) groups [\(groups.joined(separator: ", "))]")
        return Made(invitation: invitation, url: url)
    }

    /// An invitation as the admin API and `authd users invitations` show it (never its link).
    static func write(_ invitation: Invitations.Invitation, to w: inout JSONWriter) {
        w.beginObject()
        w.key("invitation_id"); w.string(invitation.id)
        w.key("email"); w.string(invitation.email)
        w.key("groups"); w.strings(invitation.groups)
        w.key("display_name"); w.string(invitation.displayName)
        w.key("invited_by"); w.string(invitation.invitedBy)
        w.key("expires_at"); w.string(Timestamp.string(invitation.expiresAt))
        w.endObject()
    }
}
