/// A button of `/login`'s one address form: a way to sign in that starts from the person's email
/// address (a mailed code, a password, an approval on another device).
///
/// `/login` asks for the address once; each provider that takes it adds its buttons to that form
/// (``PageSignIn/emailButtons()``), and each button posts the form (`email`, and `password` when a
/// button ``takesPassword``) to `/login/ID/ACTION`. An answer that is the provider's first screen
/// again with an error (a step whose template is its ``PageSignIn/loginStep()``'s, or any step with
/// an error answering one of these buttons) is shown as `/login` itself: the error above, the
/// address kept, every other way still there.
///
/// ```swift
/// public func emailButtons() -> [PageEmailButton] { [PageEmailButton(label: kernel.messages.text("email.address.send"), action: "send")] }
/// ```
public struct PageEmailButton: Sendable, Equatable {
    /// What the button says ("Email me a code").
    public var label: String
    /// Where it posts: the last part of `/login/ID/ACTION` (``PageSignIn/pagePost(action:form:state:context:)``'s `action`).
    public var action: String
    /// The form shows a password field (`password`, `autocomplete="current-password"`) for this
    /// button; an empty one is the provider's to ask for in a step of its own.
    public var takesPassword: Bool

    /// A button.
    /// - Parameters:
    ///   - label: what it says.
    ///   - action: the last part of the path it posts to.
    ///   - takesPassword: whether the form shows a password field for it.
    public init(label: String, action: String, takesPassword: Bool = false) {
        self.label = label
        self.action = action
        self.takesPassword = takesPassword
    }
}
