public import AuthKernel
import HTTPTypes

/// The email provider on authd's pages: the address, then the mailed code.
extension EmailProvider: PageSignIn {
    /// `email.address` and `email.code`, the files in `Pages/`.
    public static let pageTemplates = [
        PageTemplateDeclaration("email.address", PackageResources.address_mustache),
        PageTemplateDeclaration("email.code", PackageResources.code_mustache),
    ]

    /// Nothing of its own: its button is on `/login`'s one address form.
    public func loginStep() -> PageStep? { nil }

    /// "Email me a code" on `/login`'s address form.
    public func emailButtons() -> [PageEmailButton] { [PageEmailButton(label: kernel.messages.text("email.address.send"), action: "send")] }

    /// `send` mails a code and shows the code form; `verify` checks it and signs in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        switch action {
        case "send":
            guard let email = EmailAddress(form["email"] ?? "") else {
                return .step(PageStep(template: "email.address", values: ["email": .text(form["email"] ?? "")], error: kernel.messages.sentence(AuthError.invalidEmail), status: .badRequest))
            }
            // "Send a new code" on the code step posts here again: within the resend interval, the
            // code step stays and says when another may be asked for.
            let resending = state["email"] == email.value
            do {
                try await sendCode(to: email, context)
            } catch let error as AuthError where resending && error.status == .tooManyRequests {
                let sentence = error.retryAfter.map { kernel.messages.text("email.code.sent_recently_wait", ["seconds": String($0)]) }
                return .step(codeStep(email.value, error: sentence ?? kernel.messages.text("email.code.sent_recently"), status: .tooManyRequests))
            }
            state["email"] = email.value
            return .step(codeStep(email.value, notice: resending ? kernel.messages.text("email.code.resent", ["email": email.value]) : nil))
        case "verify":
            guard let address = state["email"], let email = EmailAddress(address) else { return .step(PageStep(template: "email.address")) }
            do {
                let user = try await verifiedUser(email, code: form["code"] ?? "", device: .none, context)
                return .signedIn(user, amr: [Self.id], device: .none)
            } catch let error as AuthError where error.status == .unauthorized {
                return .step(codeStep(email.value, error: kernel.messages.sentence(error)))
            }
        default:
            throw AuthError.notFound()
        }
    }

    func codeStep(_ email: String, error: String? = nil, status: HTTPResponse.Status = .unauthorized, notice: String? = nil) -> PageStep {
        PageStep(
            template: "email.code", values: ["email": .text(email), "lifetime": .text(kernel.messages.lifetime(settings.codes.ttl))], error: error,
            status: error == nil ? .ok : status, notice: notice)
    }
}
