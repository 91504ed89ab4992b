public import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes

/// User name and PIN on authd's pages. The server offers it only to the sign-ins of OpenID clients
/// registered `--allow-pin` (a kiosk's or a family tablet's app), never on its own: a PIN is a
/// weak secret, acceptable only where the operator chose it.
extension PINProvider: PageSignIn {
    /// `pin.login`, the file in `Pages/`.
    public static let pageTemplates = [PageTemplateDeclaration("pin.login", PackageResources.login_mustache)]

    /// The user name and PIN form.
    public func loginStep() -> PageStep? { PageStep(template: "pin.login") }

    /// `login`: the API's checks, lockout, audit and refusal floor, then the sign-in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        guard action == "login" else { throw AuthError.notFound() }
        let username = form["username"] ?? ""
        let body = VerifyBody(userID: nil, username: username, pin: form["pin"] ?? "")
        try await kernel.rateLimiter.consume(settings.attemptsPerIP, key: "pin.verify.ip:\(context.clientKey)")
        let started = ContinuousClock.now
        do {
            return .signedIn(try await verifiedUser(body), amr: [Self.id], device: .none)
        } catch let error as AuthError where error.status == .unauthorized || error.status == .tooManyRequests {
            await kernel.audit.record("sign_in_failed", provider: Self.id, account: Self.account(body), reason: error.code)
            try? await Task.sleep(until: started + Self.refusalFloor, clock: .continuous)
            let sentence = error.retryAfter != nil ? kernel.messages.sentence(error) : kernel.messages.text("pin.login.no_match")
            return .step(PageStep(template: "pin.login", values: ["username": .text(username)], error: sentence, status: error.status))
        }
    }
}
