public import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes

/// The authenticator app on `/account`: turning it on (the key as a QR code to scan and as text to
/// type or open, then the app's first code; the recovery codes shown once) and off. It has no step
/// of its own on `/login`: the server asks its code as a second factor.
extension TOTPProvider: PageSignIn {
    /// Its account section, the enrolment step and the recovery codes, the files in `Pages/`.
    public static let pageTemplates = [
        PageTemplateDeclaration("totp.account", PackageResources.account_mustache),
        PageTemplateDeclaration("totp.enroll", PackageResources.enroll_mustache),
        PageTemplateDeclaration("totp.codes", PackageResources.codes_mustache),
    ]

    /// Nothing on `/login`'s first screen.
    public func loginStep() -> PageStep? { nil }

    /// No forms on `/login`.
    public func pagePost(action: String, form: PageForm, state: inout [String: String], context: AuthRequestContext) async throws -> PageOutcome {
        throw AuthError.notFound()
    }

    /// On or off, and the button that changes it.
    public func accountStep(for principal: Principal) -> PageStep? {
        let enabled = principal.user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self)?.confirmed == true
        return PageStep(template: "totp.account", values: ["enabled": .flag(enabled)])
    }

    /// `begin` (a fresh session) shows the key, `confirm` checks the first code and shows the
    /// recovery codes, `off` (a fresh session) turns it off: the API's checks and audit each.
    public func accountPost(action: String, form: PageForm, principal: Principal, context: AuthRequestContext) async throws -> PageStep? {
        switch action {
        case "begin":
            return enrolStep(try await enroll(principal))
        case "confirm":
            do {
                let codes = try await confirm(principal, code: form["code"] ?? "")
                return PageStep(template: "totp.codes", values: ["codes": .list(codes.map { ["code": .text($0)] })])
            } catch let error as AuthError where error.code == "INVALID_CODE" {
                // The same key again, to try the next code.
                let user = try await kernel.users.user(id: principal.user.id)
                guard let user, let totp = user.secret(TOTPEnrollment.key, as: TOTPEnrollment.self), !totp.confirmed,
                    let sealed = box.open(totp.sealedSecret), let secret = Base64URL.decode(sealed)
                else { throw AuthError.invalidState("That code was wrong too many times. Start again.").worded("totp.error.start_again") }
                let encoded = Base32.encode(secret)
                var step = enrolStep(Enrolment(secret: encoded, otpauthURI: otpauthURI(secret: encoded, user: user)))
                (step.error, step.status) = (kernel.messages.text("totp.error.wrong_code"), .unauthorized)
                return step
            }
        case "off":
            try await disable(principal)
            return .backToAccount(notice: kernel.messages.text("totp.notice.off"))
        default:
            throw AuthError.notFound()
        }
    }

    func enrolStep(_ enrolment: Enrolment) -> PageStep {
        // In groups of four, as apps show keys: easier to type.
        var grouped = ""
        for (i, c) in enrolment.secret.enumerated() { grouped += (i > 0 && i % 4 == 0 ? " " : "") + String(c) }
        // The URI as a QR code to scan, drawn here: no script, no image request. An issuer and
        // address too long for any QR code (thousands of bytes) leave only the key.
        let qr = try? QRCode(enrolment.otpauthURI)
        return PageStep(template: "totp.enroll", values: [
            "grouped": .text(grouped), "otpauth_uri": .text(enrolment.otpauthURI),
            "has_qr": .flag(qr != nil), "qr_svg": .text(qr?.svg(title: kernel.messages.text("totp.enroll.qr_title")) ?? ""),
        ])
    }
}
