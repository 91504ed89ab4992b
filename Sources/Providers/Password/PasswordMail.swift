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
    /// away, as a sentence, or nothing), worded in the recipient's language (``PasswordProvider/notifyChanged``).
    /// Each mail's sentences are the catalog's keys under its name (`password.password_reset.subject`, …).
    static let changed = "password.password_changed"

}

extension PasswordProvider {
    /// The registration, reset and second-factor codes, and the notice of a changed password.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            PasswordMail.verification, "The code that confirms a new account's address (`{{code}}`, `{{lifetime}}`).",
            .code(catalog: PasswordMail.verification)),
        MailTemplateDeclaration(
            PasswordMail.reset, "The code that resets a password (`{{code}}`, `{{lifetime}}`).",
            .code(catalog: PasswordMail.reset)),
        MailTemplateDeclaration(
            PasswordMail.secondFactor, "The code asked after a right password, when the account requires it (`{{code}}`, `{{lifetime}}`).",
            .code(catalog: PasswordMail.secondFactor)),
        MailTemplateDeclaration(
            PasswordMail.changed, "The notice that the password changed (`{{how}}`, `{{when}}`, `{{device}}`, `{{removed}}`).",
            MailTemplate(
                subject: "[[password.password_changed.subject]]",
                text: """
                    [[password.password_changed.body]]{{removed}}

                    [[password.password_changed.advice]]
                    """,
                html: """
                    <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
                    <p>[[password.password_changed.body]]{{removed}}</p>
                    <p>[[password.password_changed.advice_html]]</p>
                    </body></html>
                    """)),
    ]
}
