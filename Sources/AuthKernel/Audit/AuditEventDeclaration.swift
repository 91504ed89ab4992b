/// An event name a provider (or the kernel) writes to the audit log: `authd audit events` lists
/// them, `authd audit tail --event` accepts only them, and `authd_audit_events_total` counts each.
///
/// ```swift
/// public static let auditEvents = [AuditEventDeclaration("magic_link_sent", "A sign-in link was mailed.")]
/// ```
public struct AuditEventDeclaration: Sendable, Equatable, Hashable {
    /// The name, `snake_case`, as ``AuditLog/record(_:provider:user:account:device:reason:)`` writes it.
    public var name: String
    /// One line: what happened.
    public var summary: String

    /// A declaration.
    public init(_ name: String, _ summary: String) {
        self.name = name
        self.summary = summary
    }

    /// The events the kernel itself records, whichever providers run. A provider records these too
    /// (`sign_in_failed`, `lockout`) without declaring them again.
    public static let kernel: [AuditEventDeclaration] = [
        AuditEventDeclaration("sign_in", "A session started (written by the kernel, once per sign-in)."),
        AuditEventDeclaration("sign_in_failed", "A sign-in was refused: wrong code, password or PIN, unknown account; `reason` is the error code."),
        AuditEventDeclaration("sign_in_refused", "A sign-in policy refused a sign-in whose first factor was right."),
        AuditEventDeclaration("second_factor_failed", "A wrong answer to a second-factor challenge."),
        AuditEventDeclaration("lockout", "Too many wrong answers locked a sign-in method for a while."),
        AuditEventDeclaration("refresh_reuse", "A rotated refresh token was used again; the session was ended."),
        AuditEventDeclaration("logout", "A session was ended by its user."),
        AuditEventDeclaration("account_deleted", "An account was deleted."),
        AuditEventDeclaration("api_key_created", "An API key was made."),
        AuditEventDeclaration("api_key_revoked", "An API key was revoked."),
        AuditEventDeclaration("device_approved", "A device sign-in (RFC 8628) was approved."),
        AuditEventDeclaration("device_denied", "A device sign-in (RFC 8628) was denied."),
        AuditEventDeclaration("reset_approved", "Another device approved a password reset."),
        AuditEventDeclaration("reset_denied", "Another device denied a password reset."),
        AuditEventDeclaration("credential_removed", "A way to sign in was removed from its notice's \"Not you?\" link; every session ended."),
        AuditEventDeclaration("admin", "An operator's command (`reason` names it)."),
        AuditEventDeclaration("admin_api", "A call of the admin API with a service key (`reason` names it)."),
        AuditEventDeclaration("admin_console", "A change made in the console (/admin) by the operator in `account` (`reason` names it)."),
    ]
}
