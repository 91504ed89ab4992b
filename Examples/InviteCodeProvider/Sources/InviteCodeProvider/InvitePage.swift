public import AuthKernel

/// The invite code on authd's sign-in page: one form, its template beside the code.
extension InviteCodeProvider: PageSignIn {
    /// `invite.code`, the file in `Pages/`.
    public static let pageTemplates = [PageTemplateDeclaration("invite.code", PackageResources.code_mustache)]
    /// Its sentences, in English and German (`Locales/`).
    public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]

    /// The code form.
    public func loginStep() -> PageStep? { PageStep(template: "invite.code") }

    /// `redeem`: the same check as the API's, then the server finishes the sign-in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        guard action == "redeem" else { throw AuthError.notFound() }
        do {
            let user = try await redeemedUser(code: form["code"] ?? "", displayName: form["display_name"], device: .none, context)
            return .signedIn(user, amr: [Self.id], device: .none)
        } catch AuthError.invalidInvite {
            let sentence = kernel.messages.sentence(AuthError.invalidInvite)
            return .step(PageStep(template: "invite.code", values: ["display_name": .text(form["display_name"] ?? "")], error: sentence, status: .unauthorized))
        }
    }
}
