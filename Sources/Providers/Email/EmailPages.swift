public import AuthKernel
import HTTPTypes

/// The email provider on authd's pages: the address, then the mailed code.
extension EmailProvider: PageSignIn {
    /// `email.address` and `email.code`, the files in `Pages/`.
    public static let pageTemplates = [
        PageTemplateDeclaration("email.address", PackageResources.address_mustache),
        PageTemplateDeclaration("email.code", PackageResources.code_mustache),
    ]

    /// The address form.
    public func loginStep() -> PageStep? { PageStep(template: "email.address") }

    /// `send` mails a code and shows the code form; `verify` checks it and signs in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        switch action {
        case "send":
            guard let email = EmailAddress(form["email"] ?? "") else {
                return .step(PageStep(template: "email.address", values: ["email": .text(form["email"] ?? "")], error: AuthError.invalidEmail.message, status: .badRequest))
            }
            try await sendCode(to: email, context)
            state["email"] = email.value
            return .step(codeStep(email.value))
        case "verify":
            guard let address = state["email"], let email = EmailAddress(address) else { return .step(PageStep(template: "email.address")) }
            do {
                let user = try await verifiedUser(email, code: form["code"] ?? "", device: .none, context)
                return .signedIn(user, amr: [Self.id], device: .none)
            } catch let error as AuthError where error.status == .unauthorized {
                return .step(codeStep(email.value, error: error.message))
            }
        default:
            throw AuthError.notFound()
        }
    }

    func codeStep(_ email: String, error: String? = nil) -> PageStep {
        PageStep(
            template: "email.code", values: ["email": .text(email), "lifetime": .text(MailTemplate.lifetime(settings.codes.ttl))], error: error,
            status: error == nil ? .ok : .unauthorized)
    }
}
