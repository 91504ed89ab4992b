public import AuthKernel

/// The wording of the sign-in code mail.
enum EmailMessages {
    static func signInCode(to email: EmailAddress, code: String, ttl: Int) -> MailMessage {
        let lifetime = ttl % 60 == 0 ? "\(ttl / 60) minute\(ttl == 60 ? "" : "s")" : "\(ttl) seconds"
        return MailMessage(
            to: email.value,
            subject: "Your sign-in code: \(code)",
            text: """
                Your sign-in code is \(code).

                It works once and expires in \(lifetime). If you did not try to sign in, you can ignore this email.
                """,
            code: code
        )
    }
}
