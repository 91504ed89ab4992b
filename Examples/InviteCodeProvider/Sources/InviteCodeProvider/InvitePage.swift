public import AuthKernel

/// The invite code on authd's sign-in page: one form, its template beside the code.
extension InviteCodeProvider: PageSignIn {
    /// `invite.code`, the file in `Pages/`.
    public static let pageTemplates = [PageTemplateDeclaration("invite.code", PackageResources.code_mustache)]

    /// The code form.
    public func loginStep() -> PageStep? { PageStep(template: "invite.code") }

    /// `redeem`: the same check as the API's, then the server finishes the sign-in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        guard action == "redeem" else { throw AuthError.notFound() }
        do {
            let user = try await redeemedUser(code: form["code"] ?? "", displayName: form["display_name"], device: .none, context)
            return .signedIn(user, amr: [Self.id], device: .none)
        } catch AuthError.invalidInvite {
            return .step(PageStep(template: "invite.code", values: ["display_name": .text(form["display_name"] ?? "")], error: AuthError.invalidInvite.message, status: .unauthorized))
        }
    }
}
