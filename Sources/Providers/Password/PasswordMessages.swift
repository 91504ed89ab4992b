public import AuthKernel
import Foundation

/// The wording of the password provider's mail.
enum PasswordMessages {
    static func lifetime(_ ttl: Int) -> String {
        ttl % 60 == 0 ? "\(ttl / 60) minute\(ttl == 60 ? "" : "s")" : "\(ttl) seconds"
    }

    static func verification(to email: String, code: String, ttl: Int) -> MailMessage {
        MailMessage(
            to: email, subject: "Confirm your email: \(code)",
            text: """
                Your code to confirm this email address is \(code).

                It works once and expires in \(lifetime(ttl)). If you did not create an account, you can ignore this email.
                """,
            code: code
        )
    }

    static func resetCode(to email: String, code: String, ttl: Int) -> MailMessage {
        MailMessage(
            to: email, subject: "Your password reset code: \(code)",
            text: """
                Your code to reset your password is \(code).

                It works once and expires in \(lifetime(ttl)). If you did not ask to reset your password, ignore this email: your password stays as it is.
                """,
            code: code
        )
    }

    static func changed(to email: String, at date: Date, how: String, device: String?) -> MailMessage {
        let from = device.map { " from \"\($0)\"" } ?? ""
        return MailMessage(
            to: email, subject: "Your password was changed",
            text: """
                The password of your account was changed (\(how)) at \(Timestamp.string(date))\(from), and every other session was signed out.

                If this was not you, reset your password now and check your account's sessions.
                """
        )
    }
}
