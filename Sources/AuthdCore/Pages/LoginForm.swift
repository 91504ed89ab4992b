/// `/login`'s one address form: the address (kept as typed), a password field when a button reads
/// it, and the providers' buttons (``PageEmailButton``), each posting the form to its own path.
struct LoginForm: Sendable, Equatable {
    var email: String
    var buttons: [LoginButton]
    /// The app's logo (`https:` or `data:image/…`), shown above the form with `alt=""`: the page's
    /// heading names the app.
    var appLogo: String?
    /// After "Use another address": the address field takes focus.
    var focusEmail = false

    /// What the template reads.
    func values(csrf: String) -> [String: Any] {
        var values: [String: Any] = ["csrf": csrf, "from": LoginRoutes.fromLoginField]
        if !buttons.isEmpty {
            let rows: [[String: Any]] = buttons.enumerated().map { index, button in
                ["label": button.label, "action": button.action, "primary": index == 0]
            }
            values["email_form"] = [
                "email": email, "buttons": rows, "password": buttons.contains(where: \.takesPassword), "first_action": buttons[0].action,
                // With a password beside it the address is the account's user name, as password managers read it.
                "autocomplete": buttons.contains(where: \.takesPassword) ? "username" : "email",
                "type": buttons.contains(where: \.takesPassword) ? "text" : "email", "focus": focusEmail, "typed": !email.isEmpty,
            ] as [String: Any]
        }
        if let appLogo { values["logo"] = appLogo }
        return values
    }
}

/// A button of ``LoginForm``: what it says and the path it posts to.
struct LoginButton: Sendable, Equatable {
    var label: String
    var action: String
    var takesPassword: Bool
}
