import AuthKernel

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

    static func register(on mailer: Mailer) throws {
        try mailer.register(
            verification,
            .code(
                subject: "Confirm your email for {{product_name}}: {{code}}",
                lead: "Your code to confirm this email address for {{product_name}} is",
                tail: "It works once and expires in {{lifetime}}. If you did not create an account, you can ignore this email."))
        try mailer.register(
            reset,
            .code(
                subject: "Your {{product_name}} password reset code: {{code}}", lead: "Your code to reset your {{product_name}} password is",
                tail: "It works once and expires in {{lifetime}}. If you did not ask to reset your password, ignore this email: your password stays as it is."))
        try mailer.register(
            secondFactor,
            .code(
                subject: "Your {{product_name}} code after your password: {{code}}",
                lead: "Someone signed in to your {{product_name}} account with its password. If it is you, enter",
                tail: "It expires in {{lifetime}}. If it is not you, change your password: someone knows it."))
        try mailer.register(
            changed,
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
                    """))
    }
}
