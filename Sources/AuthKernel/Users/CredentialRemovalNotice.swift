package import Foundation

/// The mail that tells a person an operator removed a way to sign in from their account (the
/// console's "unlock someone who lost their phone", contract §18): theirs to know, and to undo.
package enum CredentialRemovalNotice {
    /// The template's name.
    package static let template = "kernel.removed_by_operator"

    /// Its built-in text, the kernel catalog's `kernel.mail.removed_by_operator.*` sentences:
    /// `{{what}}` ("the authenticator app"), `{{when}}`, `{{account}}` (the account page's address).
    package static let mail = MailTemplate(
        subject: "[[kernel.mail.removed_by_operator.subject]]",
        text: """
            [[kernel.mail.removed_by_operator.removed]]

            [[kernel.mail.removed_by_operator.asked]]
            [[kernel.mail.removed_by_operator.not_asked]]
            """,
        html: """
            <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
            <p>[[kernel.mail.removed_by_operator.removed]]</p>
            <p>[[kernel.mail.removed_by_operator.asked_html]]</p>
            <p>[[kernel.mail.removed_by_operator.not_asked]]</p>
            </body></html>
            """)

    /// Mails `email` that `credential` (`passkey`, `totp`, `recovery_code`, `password`, or
    /// another factor's name) was removed at `when`, queued without waiting for delivery, with
    /// its `{{what}}` and `{{when}}` in the language the mail is written in (the account's
    /// `locale`, else the request's).
    package static func send(removed credential: String, at when: Date, to email: String, account: String, mailer: Mailer) async throws {
        let messages = mailer.templates.messages
        let language = messages.available(await mailer.language(nil, of: email)) ?? "en"
        try await mailer.send(
            template: template, to: email,
            values: [
                "what": what(credential, messages: messages, language: language), "when": messages.mailTime(when, language: language),
                "account": account,
            ], language: language, waitForDelivery: false)
    }

    /// How the mail names what was removed: "every passkey", "the password".
    package static func what(_ credential: String, messages: Messages, language: String?) -> String {
        switch credential {
        case "passkey", "totp", "recovery_code", "password": messages.text("kernel.mail.removed_by_operator.what.\(credential)", language: language)
        default: messages.text("kernel.mail.removed_by_operator.what.other", ["name": credential], language: language)
        }
    }
}
