public import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes

/// The password provider on authd's pages: sign-in, sign-up with the mailed code, and both resets
/// (a mailed code, or another signed-in device's approval with number matching).
extension PasswordProvider: PageSignIn {
    /// `password.login` and the steps after it, the files in `Pages/`.
    public static let pageTemplates = [
        PageTemplateDeclaration("password.login", PackageResources.login_mustache),
        PageTemplateDeclaration("password.password", PackageResources.password_mustache),
        PageTemplateDeclaration("password.verify", PackageResources.verify_mustache),
        PageTemplateDeclaration("password.reset-code", PackageResources.reset_code_mustache),
        PageTemplateDeclaration("password.reset-wait", PackageResources.reset_wait_mustache),
        PageTemplateDeclaration("password.account", PackageResources.account_mustache),
    ]

    /// Sign-up and the resets, folded; signing in with a password is a button of `/login`'s address form.
    public func loginStep() -> PageStep? { loginForm() }

    /// "Sign in with password" on `/login`'s address form, with the password field beside it.
    public func emailButtons() -> [PageEmailButton] { [PageEmailButton(label: kernel.messages.text("password.login.button"), action: "login", takesPassword: true)] }

    /// The first screen's part: `open` unfolds sign-up (its fields kept: `email`, `display_name`)
    /// or the resets, after an error there.
    func loginForm(
        email: String = "", notice: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok, open: String? = nil, displayName: String = ""
    ) -> PageStep {
        var values: [String: PageValue] = ["min_length": .text(String(policy.minLength))]
        if !email.isEmpty { values["email"] = .text(email) }
        if !displayName.isEmpty { values["display_name"] = .text(displayName) }
        if let open { values[open + "_open"] = .flag(true) }
        // Sign-up by invitation only: no "Create an account" to be refused (contract §17).
        values["signup"] = .flag(kernel.signup.mode != .invite)
        if kernel.signup.mode == .domains { values["signup_domains"] = .text(kernel.signup.domains.map { "@" + $0 }.joined(separator: ", ")) }
        return PageStep(template: "password.login", values: values, error: error, status: status, notice: notice)
    }

    /// `login`, `register` → `verify`, `reset-send` → `reset-verify`, `reset-device` → `reset-device-check`.
    /// Each does what its API endpoint does, with the same checks, limits and audit.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        func sentence(_ error: AuthError) -> String { kernel.messages.sentence(error) }
        let lifetime = PageValue.text(kernel.messages.lifetime(settings.codes.ttl))
        switch action {
        case "login":
            let email = form["email"] ?? ""
            // The address form sent no password (its other buttons need none): ask for it on a step of its own.
            if (form["password"] ?? "").isEmpty, let address = EmailAddress(email) {
                return .step(PageStep(template: "password.password", values: ["email": .text(address.value)]))
            }
            do {
                let user = try await verifiedUser(email: email, password: form["password"] ?? "", device: .none, arrived: nil, context)
                return .signedIn(user, amr: [Self.id], device: .none)
            } catch let error as AuthError where error.status != .serviceUnavailable {
                return .step(loginForm(email: email, error: sentence(error), status: error.status))
            }

        case "register":
            // The browser keeps a secret in its sealed cookie; the registration keeps its hash, so
            // the code completes this browser's registration without the password kept anywhere.
            let secret = Base64URL.encode(SecureRandom.bytes(32))
            do {
                let email = try await startRegistration(
                    email: form["email"] ?? "", password: form["password"] ?? "", displayName: form["display_name"].flatMap { $0.isEmpty ? nil : $0 },
                    principal: nil, browser: Hex.encode(SHA256.hash(secret)), context)
                state = ["registering": email, "secret": secret]
                return .step(PageStep(template: "password.verify", values: ["email": .text(email), "lifetime": lifetime]))
            } catch let error as AuthError where error.status != .serviceUnavailable {
                // A refused password keeps what was typed (but the password) and sign-up unfolded.
                return .step(loginForm(
                    email: form["email"] ?? "", error: sentence(error), status: error.status, open: "signup", displayName: form["display_name"] ?? ""))
            }

        case "resend":
            // "Send a new code" on the verify step: the API's resend, its limits and interval.
            guard let email = state["registering"] else { return .step(loginForm()) }
            if let refused = await resendRefusal(email, context) {
                // Why, then when another may be asked for (not the general "(Try again in …)").
                let why = refused.sentence.map { kernel.messages.text($0.key, $0.values) } ?? kernel.messages.sentence(refused)
                let wait = refused.retryAfter.map { " " + kernel.messages.text("password.verify.ask_again_in", ["seconds": String($0)]) } ?? ""
                return .step(PageStep(
                    template: "password.verify", values: ["email": .text(email), "lifetime": lifetime], error: why + wait, status: refused.status))
            }
            await resendVerificationIfPending(email)
            return .step(PageStep(template: "password.verify", values: ["email": .text(email), "lifetime": lifetime], notice: kernel.messages.text("password.verify.resent", ["email": email])))

        case "verify":
            guard let email = state["registering"], let secret = state["secret"] else { return .step(loginForm()) }
            do {
                let user = try await completeRegistration(code: form["code"] ?? "", proof: .browser(secret), email: email, principal: nil)
                state = ["address_proven": "1"]
                return .signedIn(user, amr: [Self.id], device: .none)
            } catch let error as AuthError where error.status != .serviceUnavailable {
                await kernel.audit.record("sign_in_failed", provider: Self.id, account: email, reason: error.code)
                return .step(PageStep(
                    template: "password.verify", values: ["email": .text(email), "lifetime": lifetime], error: sentence(error), status: error.status))
            }

        case "reset-send":
            do {
                let email = try self.email(form["email"] ?? "")
                try await startEmailReset(email, context)
                state = ["resetting": email]
                return .step(PageStep(template: "password.reset-code", values: ["email": .text(email), "lifetime": lifetime, "min_length": .text(String(policy.minLength))]))
            } catch let error as AuthError where error.status != .serviceUnavailable {
                return .step(loginForm(email: form["email"] ?? "", error: sentence(error), status: error.status, open: "reset"))
            }

        case "reset-verify":
            guard let email = state["resetting"] else { return .step(loginForm()) }
            let values: [String: PageValue] = ["email": .text(email), "lifetime": lifetime, "min_length": .text(String(policy.minLength))]
            do {
                let password = try policy.check(form["new_password"] ?? "", email: email)
                let user = try await checkResetCode(form["code"] ?? "", email: email, context)
                try await finishReset(user, email: email, password: password, how: "reset by emailed code")
                guard let current = try await kernel.users.user(id: user.id) else { return .step(loginForm()) }
                // The mailed code proved the address: the sign-in asks no second mailed code.
                state = ["address_proven": "1"]
                return .signedIn(current, amr: [Self.id], device: .none)
            } catch let error as AuthError where error.status != .serviceUnavailable {
                return .step(PageStep(template: "password.reset-code", values: values, error: sentence(error), status: error.status))
            }

        case "reset-device":
            do {
                let email = try self.email(form["email"] ?? "")
                let started = try await startDeviceReset(
                    email: email, newPassword: form["new_password"] ?? "", device: try DeviceInfo(name: "A browser", platform: context.browser), context)
                state = ["reset_request": started.requestID, "match_code": started.matchCode, "expires_at": started.expiresAt, "email": email]
                return .step(waitStep(state))
            } catch let error as AuthError where error.status != .serviceUnavailable {
                return .step(loginForm(email: form["email"] ?? "", error: sentence(error), status: error.status, open: "reset"))
            }

        case "reset-device-check":
            guard let id = state["reset_request"] else { return .step(loginForm()) }
            let email = state["email"] ?? ""
            switch try await deviceResetStatus(id: id).status {
            case "approved":
                do {
                    _ = try await completeDeviceReset(id: id)
                } catch let error as AuthError where error.status != .serviceUnavailable {
                    state = [:]
                    return .step(loginForm(email: email, error: sentence(error), status: error.status))
                }
                state = [:]
                return .step(loginForm(email: email, notice: kernel.messages.text("password.reset_wait.changed")))
            case "pending":
                return .step(waitStep(state, error: kernel.messages.text("password.reset_wait.pending")))
            default:
                state = [:]
                return .step(loginForm(email: email, error: kernel.messages.text("password.reset_wait.ended"), status: .conflict))
            }

        default:
            throw AuthError.notFound()
        }
    }

    /// Why a verification code may not be sent again now (the API's limits: per network, and one
    /// per address per resend interval), or nil when it may.
    func resendRefusal(_ email: String, _ context: AuthRequestContext) async -> AuthError? {
        do {
            try await kernel.rateLimiter.consume(settings.resendsPerIP, key: "password.resend.ip:\(context.clientKey)")
        } catch {
            return error.status == .tooManyRequests ? error.worded("password.verify.resend_limited") : error
        }
        guard settings.codes.resendInterval > 0 else { return nil }
        do {
            try await kernel.rateLimiter.consume(resendRule, key: resendKey(email), message: "A code was sent a moment ago: check your inbox.")
        } catch {
            return error.status == .tooManyRequests ? error.worded("password.verify.sent_recently") : error
        }
        return nil
    }

    func waitStep(_ state: [String: String], error: String? = nil) -> PageStep {
        let expires = (state["expires_at"] ?? "").replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
        return PageStep(
            template: "password.reset-wait", values: ["match_code": .text(state["match_code"] ?? ""), "expires_at": .text(expires), "account_url": .text(kernel.issuer + "/account")], error: error,
            status: error == nil ? .ok : .conflict)
    }

    /// Changing the password on `/account` (or setting a first one, for an account with an email).
    public func accountStep(for principal: Principal) -> PageStep? {
        guard let email = principal.user.email else { return nil }
        return PageStep(
            template: "password.account",
            values: [
                "has_password": .flag(principal.user.secret(Self.id, as: PasswordCredential.self) != nil), "email": .text(email),
                "min_length": .text(String(policy.minLength)),
            ])
    }

    /// `change`: the API's change (the current password checked and counted); other sessions end.
    public func accountPost(action: String, form: PageForm, principal: Principal, context: AuthRequestContext) async throws -> PageStep? {
        guard action == "change" else { throw AuthError.notFound() }
        let current = form["current_password"].flatMap { $0.isEmpty ? nil : $0 }
        try await changePassword(of: principal, current: current, new: form["new_password"] ?? "")
        return nil
    }

    /// After a registration or a reset by mailed code, the address is proven: no second mailed code.
    public func whilePageSignsIn<T: Sendable>(state: [String: String], _ signIn: () async throws -> T) async throws -> T {
        guard state["address_proven"] == "1" else { return try await signIn() }
        return try await Self.$addressProven.withValue(true) { try await signIn() }
    }
}
