public import AuthKernel
import Foundation
import HTTPTypes

/// The approval provider on authd's pages: the address, then two digits to type on a signed-in
/// device while the page waits (a few lines of script ask; without it, a button does).
extension ApprovalProvider: PageSignIn {
    /// `approval.start` and `approval.wait`, the files in `Pages/`.
    public static let pageTemplates = [
        PageTemplateDeclaration("approval.start", PackageResources.start_mustache),
        PageTemplateDeclaration("approval.wait", PackageResources.wait_mustache),
    ]

    /// Nothing of its own: its button is on `/login`'s one address form.
    public func loginStep() -> PageStep? { nil }

    /// "Approve from another device" on `/login`'s address form.
    public func emailButtons() -> [PageEmailButton] { [PageEmailButton(label: kernel.messages.text("approval.button"), action: "start")] }

    /// The device a browser's request names to the approving one.
    static let browser = (try? DeviceInfo(name: "A web browser", platform: "web")) ?? .none

    /// `start` makes a request and shows its number; `status` answers 202 while it waits (the
    /// page's script asks); `check` collects the approved request and signs in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        switch action {
        case "start":
            guard let email = EmailAddress(form["email"] ?? "") else {
                return .step(
                    PageStep(template: "approval.start", values: ["email": .text(form["email"] ?? "")], error: kernel.messages.sentence(AuthError.invalidEmail), status: .badRequest))
            }
            // Named by its browser and system where the User-Agent tells them: the approving page lists it.
            let device = (try? DeviceInfo(name: context.browser ?? Self.browser.name, platform: Self.browser.platform)) ?? Self.browser
            let started = try await start(.email(email.value), device: device, context)
            state = ["request_id": started.requestID, "request_token": started.requestToken ?? "", "match_code": started.matchCode]
            return .step(waitStep(state))
        case "status":
            guard let id = state["request_id"], let approval = try await kernel.approvals.approval(id: id) else { return .step(PageStep(template: "approval.start")) }
            let waiting = approval.status(at: kernel.clock.now()) == .pending
            return .step(waitStep(state, status: waiting ? .accepted : .ok))
        case "check":
            guard let id = state["request_id"], let token = state["request_token"] else { return .step(PageStep(template: "approval.start")) }
            do {
                let (user, approver, _) = try await collect(id: id, token: token)
                state = [:]
                // Unnamed: the pages name the browser's session by its browser and system.
                return .signedIn(user, amr: [Self.id], device: .none, multiFactor: approver.amr.contains("mfa"), vouchedAt: approver.authTime)
            } catch let error as AuthError where error.code == AuthError.pending.code {
                return .step(waitStep(state, error: kernel.messages.text("approval.error.not_yet")))
            }
        default:
            throw AuthError.notFound()
        }
    }

    func waitStep(_ state: [String: String], error: String? = nil, status: HTTPResponse.Status? = nil) -> PageStep {
        PageStep(
            template: "approval.wait",
            values: [
                "match_code": .text(state["match_code"] ?? ""), "lifetime": .text(kernel.messages.lifetime(settings.ttl)),
                "interval": .text(String(settings.interval)), "account_url": .text(kernel.issuer + "/account"),
            ],
            error: error, status: status ?? (error == nil ? .ok : .badRequest))
    }
}
