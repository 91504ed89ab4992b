public import AuthKernel
import HTTPTypes

/// The password provider on authd's pages: the address and the password.
extension PasswordProvider: PageSignIn {
    /// `password.login`, the file in `Pages/`.
    public static let pageTemplates = [PageTemplateDeclaration("password.login", PackageResources.login_mustache)]

    /// The address and password form.
    public func loginStep() -> PageStep? { PageStep(template: "password.login") }

    /// `login` checks the password (audited, held to the refusal floor like the API's) and signs in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        guard action == "login" else { throw AuthError.notFound() }
        let email = form["email"] ?? ""
        do {
            let user = try await verifiedUser(email: email, password: form["password"] ?? "", device: .none, arrived: nil, context)
            return .signedIn(user, amr: [Self.id], device: .none)
        } catch let error as AuthError where error.status != .serviceUnavailable {
            let sentence = error.retryAfter.map { "\(error.message) (Try again in \($0) s.)" } ?? error.message
            return .step(PageStep(template: "password.login", values: ["email": .text(email)], error: sentence, status: error.status))
        }
    }
}
