import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird

/// `/device` (contract §7, on the pages of §13): a person signed in on this browser types the code
/// a box without a keyboard shows (or follows `verification_uri_complete`), compares it and
/// approves or denies. The sign-in is the browser's session from `/login`, with every provider and
/// second factor the pages offer; approving needs a recent one (it lets a device into the
/// account), else the person signs in again. The pages' cookie, CSRF, `Origin` and header rules.
struct DevicePage: Sendable {
    let kernel: Kernel
    let devices: DeviceAuthorizations
    let renderer: PageRenderer
    let login: LoginRoutes

    func add(to router: Router<AuthRequestContext>) {
        let page = self
        router.get("device") { request, context in try await page.login.guarded(request, context) { try await page.show(request) } }
        for action in ["lookup", "approve", "deny", "reauth"] {
            router.post("device/\(action)") { request, context in
                try await page.login.posted(request, context) { form in try await page.post(action, form, request, context) }
            }
        }
    }

    /// Where the sign-in page sends the person back to.
    static func path(_ userCode: String?) -> String {
        guard let userCode, !userCode.isEmpty else { return "/device" }
        return "/device?user_code=" + (userCode.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    }

    static func loginRedirect(_ userCode: String?) -> Response {
        PageGate.redirect(to: "/login?return_to=" + (path(userCode).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), status: .found)
    }

    func show(_ request: Request, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let userCode = request.uri.queryParameters.get("user_code").map { String($0.prefix(32)) }
        guard let principal = try await login.browserPrincipal(request) else { return Self.loginRedirect(userCode) }
        return try await render(principal, userCode: userCode, error: error, status: status)
    }

    func render(_ principal: Principal, userCode: String?, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let csrf = LoginRoutes.csrf(principal.session.id, key: login.csrfKey)
        var values: [String: Any] = [
            "csrf": csrf, "who": principal.user.email ?? principal.user.username ?? principal.user.id.lowercased, "user_code": userCode ?? "",
        ]
        if let userCode, !userCode.isEmpty, let pending = try? await devices.pending(userCode) {
            if kernel.sessions.isFresh(principal) {
                values["confirm"] = true
                values["user_code"] = pending.userCode
                if let name = pending.device.name { values["name"] = name }
                if let platform = pending.device.platform { values["platform"] = platform }
            } else {
                values["stale"] = true
            }
        } else {
            values["enter"] = true
        }
        return renderer.page(
            title: kernel.messages.text(values["confirm"] != nil ? "device.title.confirm" : "device.title.enter"), content: renderer.render("device", values), error: error,
            status: status, signedIn: true, csrf: csrf)
    }

    func post(_ action: String, _ form: PageForm, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        let typed = form["user_code"].map { String($0.prefix(32)) }
        guard let principal = try await login.browserPrincipal(request) else { return Self.loginRedirect(typed) }
        guard login.carriesCSRF(form, of: principal) else {
            return try await render(principal, userCode: nil, error: kernel.messages.text("page.form_out_of_date"), status: .forbidden)
        }
        switch action {
        case "lookup":
            try await kernel.rateLimiter.consume(
                devices.settings.lookupsPerIP, key: "device.lookup.ip:\(context.clientKey)", message: "Too many codes tried. Wait a few minutes.")
            guard let pending = try? await devices.pending(typed ?? "") else {
                return try await render(
                    principal, userCode: typed, error: kernel.messages.text("device.error.no_device"),
                    status: .badRequest)
            }
            return PageGate.redirect(to: Self.path(pending.userCode))
        case "reauth":
            // A fresh sign-in: this browser's session ends and the sign-in page brings the person back here.
            try await kernel.sessions.revoke(principal.session.id, of: principal.user.id)
            var response = Self.loginRedirect(typed)
            response.setCookie(BrowserCookie.cookie("", maxAge: 0))
            return response
        default:
            let approve = action == "approve"
            // Approving lets a device in: only a recent sign-in may (contract §12's freshness).
            guard !approve || kernel.sessions.isFresh(principal) else { return try await render(principal, userCode: typed, status: .forbidden) }
            let pending: DeviceAuthorizations.Pending
            do {
                pending = try await devices.answer(typed ?? "", approve: approve, by: principal.user.id, session: principal.session.id)
            } catch let error as AuthError {
                return try await render(
                    principal, userCode: nil,
                    error: kernel.messages.text(error.status == .notFound ? "device.error.expired" : "device.error.answered"),
                    status: error.status)
            }
            if approve {
                let label = [pending.device.name, pending.device.platform].compactMap { $0 }.joined(separator: ", ")
                await kernel.users.noticeMethodAdded(
                    principal.user, method: SignInMethodNotices.catalogMethod("device.method_added", "device", label, otherwise: "device.unnamed"),
                    credential: .provided(kind: "device", reference: ""))
            }
            let text = kernel.messages.text(approve ? "device.approved.message" : "device.denied.message")
            return renderer.page(
                title: kernel.messages.text(approve ? "device.approved.title" : "device.denied.title"), content: renderer.render("message", ["message": text]), signedIn: true,
                csrf: LoginRoutes.csrf(principal.session.id, key: login.csrfKey))
        }
    }
}
