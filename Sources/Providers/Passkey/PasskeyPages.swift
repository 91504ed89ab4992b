public import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Logging

/// Passkeys on authd's pages: a discoverable sign-in from `/login`, and adding one on `/account`.
/// The WebAuthn ceremony is the pages' one script (`/assets/passkey.js`); the options travel in
/// the step's `data-options` and the answer comes back in the form's `credential` field.
extension PasskeyProvider: PageSignIn {
    /// The sign-in button, the ceremony's form and the account's list, the files in `Pages/`.
    public static let pageTemplates = [
        PageTemplateDeclaration("passkey.start", PackageResources.start_mustache),
        PageTemplateDeclaration("passkey.ceremony", PackageResources.ceremony_mustache),
        PageTemplateDeclaration("passkey.account", PackageResources.account_mustache),
    ]

    /// A button that starts the ceremony at once (`/assets/passkey.js` fetches the options and
    /// runs it on `/login`); without JavaScript it posts, and the ceremony's step follows.
    public func loginStep() -> PageStep? { PageStep(template: "passkey.start") }

    /// `begin` issues a challenge and shows the ceremony; `finish` checks the assertion (two factors
    /// at once: user verification is required) and signs in.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        switch action {
        case "begin":
            var step = try ceremony(mode: "get", options: try await loginOptions(context), button: kernel.messages.text("passkey.ceremony.use"))
            // Without JavaScript the ceremony is a page of its own: it has a way back to the others.
            step.values["signing_in"] = true
            return .step(step)
        case "finish":
            try await kernel.rateLimiter.consume(settings.loginPerIP, key: "passkey.login.ip:\(context.clientKey)")
            do {
                guard let json = form["credential"], json.utf8.count <= 16_384,
                    let credential = try? JSONDecoder().decode(AuthenticationCredential.self, from: Data(json.utf8))
                else { throw WebAuthnError("the form carries no AuthenticationResponseJSON") }
                let user = try await verifiedAssertion(credential, purpose: .login, key: nil, expectedUser: nil)
                return .signedIn(user, amr: [Self.id], device: .none, multiFactor: true)
            } catch let error as WebAuthnError {
                kernel.logger.info("passkey sign-in refused", metadata: ["reason": "\(error)"])
                await kernel.audit.record("sign_in_failed", provider: Self.id, reason: "INVALID_CREDENTIALS")
                return .step(PageStep(template: "passkey.start", error: kernel.messages.text("passkey.error.unknown"), status: .unauthorized))
            }
        default:
            throw AuthError.notFound()
        }
    }

    /// The ceremony's step: the options as JSON for the script.
    func ceremony<Options: Encodable>(mode: String, options: Options, button: String, naming: Bool = false) throws -> PageStep {
        let json = String(decoding: try JSONEncoder().encode(options), as: UTF8.self)
        return PageStep(
            template: "passkey.ceremony", values: ["mode": .text(mode), "options": .text(json), "button": .text(button), "naming": .flag(naming)])
    }

    /// The account's passkeys and a button to add one.
    public func accountStep(for principal: Principal) -> PageStep? {
        let now = kernel.clock.now()
        let all = PasskeyRecord.all(principal.user)
        // Whether removing one leaves the account without a second factor: the page says so beside it.
        var without = principal.user
        try? without.setSecret(PasskeyRecord.key, Optional<[PasskeyRecord]>.none)
        let onlyFactor = all.count == 1 && !kernel.signInHooks.hasSecondFactor(without)
        let rows: [[String: PageValue]] = all.enumerated().map { index, record in
            var row: [String: PageValue] = [
                "id": .text(record.id), "n": .text(String(index + 1)), "name": .text(record.name),
                "created": .time(Date(timeIntervalSince1970: record.createdAt), now: now, messages: kernel.messages), "only_factor": .flag(onlyFactor),
            ]
            if let used = record.lastUsedAt { row["last_used"] = .time(Date(timeIntervalSince1970: used), now: now, messages: kernel.messages) }
            return row
        }
        return PageStep(template: "passkey.account", values: ["passkeys": .list(rows), "has_passkeys": .flag(!rows.isEmpty)])
    }

    /// `begin` shows the creation ceremony (a fresh sign-in only); `finish` adds the passkey;
    /// `rename` names one; `remove` (a fresh sign-in only) takes one away.
    public func accountPost(action: String, form: PageForm, principal: Principal, context: AuthRequestContext) async throws -> PageStep? {
        switch action {
        case "begin":
            return try ceremony(mode: "create", options: try await creationOptions(for: principal), button: kernel.messages.text("passkey.ceremony.create"), naming: true)
        case "finish":
            guard let json = form["credential"], json.utf8.count <= 65_536,
                let credential = try? JSONDecoder().decode(RegistrationCredential.self, from: Data(json.utf8))
            else { throw AuthError.invalidRequest("The browser sent no passkey. Try again.", field: "credential").worded("passkey.error.no_credential") }
            let name = try Self.validName(form["name"].flatMap { $0.isEmpty ? nil : $0 })
            let record = try await register(credential, name: name, principal: principal)
            return .backToAccount(notice: kernel.messages.text("passkey.notice.added", ["name": record.name]))
        case "rename":
            guard let name = try Self.validName(form["name"]) else { throw AuthError.invalidRequest("Give the passkey a name.", field: "name").worded("passkey.error.name_required") }
            try await rename(form["id"] ?? "", of: principal.user.id, to: name)
            return .backToAccount(notice: kernel.messages.text("passkey.notice.renamed", ["name": name]))
        case "remove":
            try kernel.sessions.requireFresh(principal)
            // The account's only way in stays until another is added: removing it would lock the person out.
            let others = principal.user.identities.filter { $0.provider != Self.id }
            if others.isEmpty, PasskeyRecord.all(principal.user).count == 1 {
                throw AuthError.invalidState(
                    "This passkey is your only way to sign in: add another (an email address, a password) before removing it."
                ).worded("passkey.error.only_way_in")
            }
            let after = try await remove(form["id"] ?? "", from: principal.user.id, device: principal.session.deviceName)
            if kernel.signInHooks.hasSecondFactor(after) { return .backToAccount(notice: kernel.messages.text("passkey.notice.removed")) }
            return .backToAccount(notice: kernel.messages.text("passkey.notice.removed_last_factor"))
        default:
            throw AuthError.notFound()
        }
    }
}
