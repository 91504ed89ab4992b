/// A provider that signs people in on authd's pages (`/login`): what it shows first, and what it
/// does with the forms its steps post to `/login/ID/ACTION`.
///
/// The server does the rest the same way for every provider: the pages' cookie, CSRF and `Origin`
/// checks, the layout, the sign-in policies and second factors, the browser's session and the way
/// back to `return_to`. A provider's pending state between steps (the address a code was mailed to)
/// is kept in the browser's sealed pre-sign-in cookie, never in the store.
///
/// ```swift
/// public func emailButtons() -> [PageEmailButton] { [PageEmailButton(label: kernel.messages.text("email.address.send"), action: "send")] }
/// ```
public protocol PageSignIn: AuthProvider {
    /// The templates its steps render.
    static var pageTemplates: [PageTemplateDeclaration] { get }
    /// Its part of `/login`'s first screen, or nil to show nothing.
    func loginStep() -> PageStep?
    /// Its buttons on `/login`'s one address form (``PageEmailButton``), for a way in that starts
    /// from the person's email address; empty (the default) for none.
    func emailButtons() -> [PageEmailButton]
    /// Handles a form posted to `/login/ID/ACTION` (its CSRF token and `Origin` already checked).
    /// - Parameters:
    ///   - action: the last part of the path (`send`, `verify`).
    ///   - form: the posted fields.
    ///   - state: this sign-in's pending state, the provider's own keys; kept for the next post.
    ///   - context: the request's context (the client's network for rate limits).
    /// - Throws: ``AuthError``: the server shows its message above the provider's first step.
    func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome

    /// Handles a GET of `/login/ID/PATH`: a link its step shows, or an identity provider sending
    /// the browser back (a redirect carries no form, so no CSRF token: what it brings must be
    /// bound to `state`, which only this browser's sealed cookie holds).
    /// - Parameters:
    ///   - path: what follows `/login/ID/` (`google`, `google/callback`).
    ///   - query: the query's fields.
    ///   - state: this sign-in's pending state, the provider's own keys; kept for the next request.
    ///   - browser: the browser's own sign-in (to link a way in to it). On a link (`/login/ID/ACTION`)
    ///     only when the link carries that sign-in's pages' CSRF token as `csrf` (the `{{csrf}}` an
    ///     account step's template is given; the server refuses a wrong one), so another site's
    ///     link acts for nobody; on a way back (`/login/ID/ACTION/STEP`) whenever it has one.
    ///   - context: the request's context.
    /// - Throws: ``AuthError``: the server shows its message above the first steps.
    func pageGet(path: String, query: PageForm, state: inout [String: String], browser: Principal?, context: AuthRequestContext) async throws
        -> PageOutcome

    /// Runs the server's sign-in after this provider answered ``PageOutcome/signedIn(_:amr:device:multiFactor:vouchedAt:)``;
    /// the sign-in policies run inside `signIn`. A provider whose step proved something its own
    /// policy reads (an address just proven by a mailed code) sets it around the call. The default
    /// runs `signIn` as it is.
    /// - Parameters:
    ///   - state: the sign-in's pending state as the provider left it.
    ///   - signIn: the server's sign-in.
    func whilePageSignsIn<T: Sendable>(state: [String: String], _ signIn: () async throws -> T) async throws -> T

    /// Its part of `/account` for the signed-in person (their passkeys and a button to add one),
    /// or nil to show nothing there.
    func accountStep(for principal: Principal) -> PageStep?

    /// Handles a form its account step posted to `/account/ID/ACTION` (CSRF token, `Origin` and
    /// the browser's session already checked).
    /// - Returns: the next step to show; ``PageStep/backToAccount(notice:)`` when done, saying what
    ///   was done; or nil, back to `/account` without a word.
    /// - Throws: ``AuthError``: the server shows its message on `/account`.
    func accountPost(action: String, form: PageForm, principal: Principal, context: AuthRequestContext) async throws -> PageStep?
}

extension PageSignIn {
    /// No buttons on the address form.
    public func emailButtons() -> [PageEmailButton] { [] }

    /// No links: 404.
    public func pageGet(path: String, query: PageForm, state: inout [String: String], browser: Principal?, context: AuthRequestContext) async throws
        -> PageOutcome
    {
        throw AuthError.notFound()
    }

    /// Runs `signIn` as it is.
    public func whilePageSignsIn<T: Sendable>(state: [String: String], _ signIn: () async throws -> T) async throws -> T {
        try await signIn()
    }

    /// Nothing on `/account`.
    public func accountStep(for principal: Principal) -> PageStep? { nil }

    /// No account forms: 404.
    public func accountPost(action: String, form: PageForm, principal: Principal, context: AuthRequestContext) async throws -> PageStep? {
        throw AuthError.notFound()
    }
}
