public import AuthKernel

/// The email provider's mail.
enum EmailMail {
    /// `email.sign_in_code`: `{{code}}`, `{{lifetime}}`, `{{product_name}}`.
    static let signInCode = "email.sign_in_code"
}

extension EmailProvider {
    /// The sign-in code.
    public static let mailTemplates = [
        MailTemplateDeclaration(
            EmailMail.signInCode, "The code `send-code` mails (`{{code}}`, `{{lifetime}}`).",
            .code(
                subject: "Your {{product_name}} sign-in code: {{code}}", lead: "Your {{product_name}} sign-in code is",
                tail: "It works once and expires in {{lifetime}}. If you did not try to sign in, you can ignore this email."))
    ]
}
