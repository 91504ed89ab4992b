/// The mail that tells a person an operator removed a way to sign in from their account (the
/// console's "unlock someone who lost their phone", contract §18): theirs to know, and to undo.
package enum CredentialRemovalNotice {
    /// The template's name.
    package static let template = "kernel.removed_by_operator"

    /// Its built-in text: `{{what}}` ("the authenticator app"), `{{when}}`, `{{account}}` (the
    /// account page's address).
    package static let mail = MailTemplate(
        subject: "A way to sign in was removed from your {{product_name}} account",
        text: """
            An operator of {{product_name}} removed {{what}} from your account at {{when}}.

            If you asked them to (a lost or new phone, say), sign in and add a new one on your account page: {{account}}
            If you did not ask, tell them, and check your account there.
            """,
        html: """
            <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
            <p>An operator of {{product_name}} removed {{what}} from your account at {{when}}.</p>
            <p>If you asked them to (a lost or new phone, say), sign in and add a new one on <a href="{{account}}">your account page</a>.</p>
            <p>If you did not ask, tell them, and check your account there.</p>
            </body></html>
            """)
}
