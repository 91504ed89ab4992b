public import AuthKernel

/// The email provider's mail.
enum EmailMail {
    /// `email.sign_in_code`: `{{code}}`, `{{lifetime}}`, `{{product_name}}`; worded by the catalog's
    /// `email.sign_in_code.subject`, `.lead` and `.tail`.
    static let signInCode = "email.sign_in_code"
}

extension EmailProvider {
    /// The sign-in code.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            EmailMail.signInCode, "The code `send-code` mails (`{{code}}`, `{{lifetime}}`).",
            .code(catalog: EmailMail.signInCode))
    ]
}
