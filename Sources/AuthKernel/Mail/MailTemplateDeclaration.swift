/// A mail a provider sends, declared with its built-in wording: registered before the provider is
/// created, listed by `authd check` (with whether `DATA/templates/` overrides it).
///
/// ```swift
/// public static let mailTemplates = [
///     MailTemplateDeclaration(
///         template, "The sign-in link and code (`{{link}}`, `{{code}}`, `{{lifetime}}`).",
///         MailTemplate(subject: "Your {{product_name}} sign-in link (code {{code}})", text: …, html: …))
/// ]
/// ```
public struct MailTemplateDeclaration: Sendable {
    /// `PROVIDER.NAME`: the provider's id, a dot, a name.
    public var name: String
    /// One line: when it is sent.
    public var summary: String
    /// The built-in wording.
    public var template: MailTemplate

    /// A declaration.
    public init(_ name: String, _ summary: String, _ template: MailTemplate) {
        self.name = name
        self.summary = summary
        self.template = template
    }
}
