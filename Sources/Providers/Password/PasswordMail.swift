public import AuthKernel

/// The password provider's mail.
enum PasswordMail {
    /// `password.email_verification`: the registration code (`{{code}}`, `{{lifetime}}`).
    static let verification = "password.email_verification"
    /// `password.password_reset`: the reset code (`{{code}}`, `{{lifetime}}`).
    static let reset = "password.password_reset"
    /// `password.second_factor_code`: the code asked after a right password (`{{code}}`, `{{lifetime}}`).
    static let secondFactor = "password.second_factor_code"
    /// `password.password_changed`: `{{how}}`, `{{when}}`, `{{device}}` and `{{removed}}` (what a reset took
    /// away, as a sentence, or nothing).
    static let changed = "password.password_changed"

}

extension PasswordProvider {
    /// The registration, reset and second-factor codes, and the notice of a changed password.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            PasswordMail.verification, "The code that confirms a new account's address (`{{code}}`, `{{lifetime}}`).",
            .code(
                subject: "Confirm your email for {{product_name}}: {{code}}",
                lead: "Your code to confirm this email address for {{product_name}} is",
                tail: "It works once and expires in {{lifetime}}. If you did not create an account, you can ignore this email.")),
        MailTemplateDeclaration(
            PasswordMail.reset, "The code that resets a password (`{{code}}`, `{{lifetime}}`).",
            .code(
                subject: "Your {{product_name}} password reset code: {{code}}", lead: "Your code to reset your {{product_name}} password is",
                tail: "It works once and expires in {{lifetime}}. If you did not ask to reset your password, ignore this email: your password stays as it is.")),
        MailTemplateDeclaration(
            PasswordMail.secondFactor, "The code asked after a right password, when the account requires it (`{{code}}`, `{{lifetime}}`).",
            .code(
                subject: "Your {{product_name}} code after your password: {{code}}",
                lead: "Someone signed in to your {{product_name}} account with its password. If it is you, enter",
                tail: "It expires in {{lifetime}}. If it is not you, change your password: someone knows it.")),
        MailTemplateDeclaration(
            PasswordMail.changed, "The notice that the password changed (`{{how}}`, `{{when}}`, `{{device}}`, `{{removed}}`).",
            MailTemplate(
                subject: "Your {{product_name}} password was changed",
                text: """
                    The password of your {{product_name}} account was changed ({{how}}) at {{when}}{{device}}, and every other session was signed out.{{removed}}

                    If this was not you, reset your password now and check your account's sessions.
                    """,
                html: """
                    <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
                    <p>The password of your {{product_name}} account was changed ({{how}}) at {{when}}{{device}}, and every other session was signed out.{{removed}}</p>
                    <p><strong>If this was not you</strong>, reset your password now and check your account's sessions.</p>
                    </body></html>
                    """)),
    ]
}
