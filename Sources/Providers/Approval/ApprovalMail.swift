public import AuthKernel

/// The approval provider's mail.
enum ApprovalMail {
    /// `approval.not_me`: `{{device}}`, `{{network}}`, `{{when}}`, `{{block}}`, `{{product_name}}`.
    static let notMe = "approval.not_me"
}

extension ApprovalProvider {
    /// The notice to the owner after a "not me", worded by the catalog's `approval.not_me.*` sentences.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            ApprovalMail.notMe,
            "The notice that a sign-in request was refused as not the owner's (`{{device}}`, `{{network}}`, `{{when}}`, `{{block}}`).",
            MailTemplate(
                subject: "[[approval.not_me.subject]]",
                text: """
                    [[approval.not_me.asked]] [[approval.not_me.nobody]]

                    [[approval.not_me.blocked]]

                    [[approval.not_me.advice]]
                    """,
                html: """
                    <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
                    <p>[[approval.not_me.asked]] <strong>[[approval.not_me.nobody]]</strong></p>
                    <p>[[approval.not_me.blocked]]</p>
                    <p>[[approval.not_me.advice]]</p>
                    </body></html>
                    """))
    ]

    /// What the approval provider records beyond the kernel's events.
    public static let auditEvents = [
        AuditEventDeclaration("approval_sign_in_approved", "A signed-in device approved a sign-in request with the right number."),
        AuditEventDeclaration("approval_sign_in_denied", "A sign-in request was denied (on the device, by a wrong number, or as not me)."),
    ]
}
