public import HTTPTypes

/// One screen of a provider's sign-in on authd's pages: one of its templates with values.
///
/// ```swift
/// return .step(codeStep(email.value, error: kernel.messages.sentence(error)))
/// ```
public struct PageStep: Sendable, Equatable {
    /// The template's name (`ID.NAME`, one of the provider's ``AuthProvider`` page templates).
    public var template: String
    /// Its values.
    public var values: [String: PageValue]
    /// A sentence to show above the form and announce to screen readers (a wrong code, a limit).
    public var error: String?
    /// The response's status (a step shown for an error is 4xx).
    public var status: HTTPResponse.Status
    /// One line saying what was done ("Passkey renamed."), shown above the page and announced.
    public var notice: String?

    /// A step.
    public init(
        template: String, values: [String: PageValue] = [:], error: String? = nil, status: HTTPResponse.Status = .ok, notice: String? = nil
    ) {
        self.template = template
        self.values = values
        self.error = error
        self.status = status
        self.notice = notice
    }

    /// What an account form answers once its work is done: back to `/account`, which shows `notice`
    /// as its one-line success message.
    ///
    /// ```swift
    /// let step: PageStep = .backToAccount(notice: "Passkey renamed.")
    /// ```
    public static func backToAccount(notice: String) -> PageStep {
        PageStep(template: accountTemplate, notice: notice)
    }

    /// Whether this step is ``backToAccount(notice:)``'s.
    package var returnsToAccount: Bool { template == Self.accountTemplate }

    static let accountTemplate = "kernel.back-to-account"
}
