public import AuthKernel

/// The approval provider's mail.
enum ApprovalMail {
    /// `approval.not_me`: `{{device}}`, `{{network}}`, `{{when}}`, `{{block}}`, `{{product_name}}`.
    static let notMe = "approval.not_me"
}

extension ApprovalProvider {
    /// The notice to the owner after a "not me".
    public static let mailTemplates = [
        MailTemplateDeclaration(
            ApprovalMail.notMe,
            "The notice that a sign-in request was refused as not the owner's (`{{device}}`, `{{network}}`, `{{when}}`, `{{block}}`).",
            MailTemplate(
                subject: "A sign-in to your {{product_name}} account was refused",
                text: """
                    Someone asked to sign in to your {{product_name}} account from {{device}} (network {{network}}) at {{when}}, and you answered on one of your devices that it was not you. Nobody was signed in.

                    Requests from that network are ignored for {{block}}, and your devices will not be alerted to sign-in requests for a day; you can still see them in the app.

                    If someone keeps trying, they know your email address or user name, nothing more. If you also got codes you did not ask for, change your password.
                    """,
                html: """
                    <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
                    <p>Someone asked to sign in to your {{product_name}} account from {{device}} (network {{network}}) at {{when}}, and you answered on one of your devices that it was not you. <strong>Nobody was signed in.</strong></p>
                    <p>Requests from that network are ignored for {{block}}, and your devices will not be alerted to sign-in requests for a day; you can still see them in the app.</p>
                    <p>If someone keeps trying, they know your email address or user name, nothing more. If you also got codes you did not ask for, change your password.</p>
                    </body></html>
                    """))
    ]

    /// What the approval provider records beyond the kernel's events.
    public static let auditEvents = [
        AuditEventDeclaration("approval_sign_in_approved", "A signed-in device approved a sign-in request with the right number."),
        AuditEventDeclaration("approval_sign_in_denied", "A sign-in request was denied (on the device, by a wrong number, or as not me)."),
    ]
}
