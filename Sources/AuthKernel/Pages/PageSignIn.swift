/// A provider that signs people in on authd's pages (`/login`): what it shows first, and what it
/// does with the forms its steps post to `/login/ID/ACTION`.
///
/// The server does the rest the same way for every provider: the pages' cookie, CSRF and `Origin`
/// checks, the layout, the sign-in policies and second factors, the browser's session and the way
/// back to `return_to`. A provider's pending state between steps (the address a code was mailed to)
/// is kept in the browser's sealed pre-sign-in cookie, never in the store.
///
/// ```swift
/// public func loginStep() -> PageStep? { PageStep(template: "email.address") }
/// ```
public protocol PageSignIn: AuthProvider {
    /// The templates its steps render.
    static var pageTemplates: [PageTemplateDeclaration] { get }
    /// Its part of `/login`'s first screen, or nil to show nothing.
    func loginStep() -> PageStep?
    /// Handles a form posted to `/login/ID/ACTION` (its CSRF token and `Origin` already checked).
    /// - Parameters:
    ///   - action: the last part of the path (`send`, `verify`).
    ///   - form: the posted fields.
    ///   - state: this sign-in's pending state, the provider's own keys; kept for the next post.
    ///   - context: the request's context (the client's network for rate limits).
    /// - Throws: ``AuthError``: the server shows its message above the provider's first step.
    func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome
}
