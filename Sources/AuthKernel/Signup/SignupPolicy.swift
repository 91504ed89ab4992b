package import AuthStorage
import Foundation

/// Who may make an account here (contract §17): the `signup` section, applied by the kernel on
/// every path that creates an account, and there for a provider to ask first (`kernel.signup`).
///
/// ``UserService/signIn(_:linkingTo:)`` refuses a new account the policy does not allow with 403
/// `SIGNUP_CLOSED`; signing in to an account that exists is never refused. A provider that would
/// do work before its account exists (mail a code, hash a password) asks
/// ``allowsNewAccount(email:emailVerified:)`` first, and answers a refusal exactly as a sign-up
/// (the same status, body and work) where the caller holds no proof yet:
///
/// ```swift
/// let code = try await kernel.codes.issue(purpose: Self.purpose, key: email.value, policy: settings.codes)
/// if try await kernel.signup.refusesSignUp(email: email.value, linkingTo: context.principal) {
///     try await kernel.signup.mailNoAccount(to: email.value)
/// } else {
///     // the code's mail, as for any sign-in
/// }
/// ```
public struct SignupPolicy: Sendable {
    /// `signup.mode`.
    public enum Mode: String, Sendable, CaseIterable {
        /// Anyone may make an account (the default: the apps' own sign-up needs it).
        case open
        /// Only an invitation makes an account.
        case invite
        /// Only a verified email of one of `signup.domains` (and an invitation) makes one.
        case domains
    }

    /// `signup.mode`.
    public let mode: Mode
    /// `signup.domains`: lower case; a subdomain counts only when listed itself.
    public let domains: [String]
    /// `signup.anonymous`: whether `POST /anonymous` makes accounts (default: only when `open`).
    public let allowsAnonymous: Bool
    let store: (any AuthStore)?
    let clock: any AuthClock
    let mailer: Mailer?

    /// The mail an unknown address gets instead of a code when sign-up is closed.
    package static let noAccountTemplate = "kernel.no_account"

    /// A policy (the server builds it from the configuration; tests from their own).
    package init(
        mode: Mode = .open, domains: [String] = [], allowsAnonymous: Bool? = nil, store: (any AuthStore)? = nil, clock: any AuthClock = SystemClock(),
        mailer: Mailer? = nil
    ) {
        self.clock = clock
        self.mode = mode
        self.domains = domains.map { $0.lowercased() }
        self.allowsAnonymous = allowsAnonymous ?? (mode == .open)
        self.store = store
        self.mailer = mailer
    }

    /// Whether the mode alone lets a person with this email make an account: always when `open`;
    /// under `domains`, a verified address of a listed domain.
    public func permits(email: String?, emailVerified: Bool) -> Bool {
        switch mode {
        case .open: return true
        case .invite: return false
        case .domains:
            guard let email, emailVerified, let at = email.lastIndex(of: "@") else { return false }
            return domains.contains(email[email.index(after: at)...].lowercased())
        }
    }

    /// Whether a new account may be made for this email: the mode permits it, or the verified
    /// address holds a pending invitation (which the new account then takes).
    public func allowsNewAccount(email: String?, emailVerified: Bool) async throws -> Bool {
        if permits(email: email, emailVerified: emailVerified) { return true }
        guard let email, emailVerified, let store else { return false }
        return try await Invitations.pending(email: email, in: store, now: clock.now()) != nil
    }

    /// Whether a sign-up at `email` (a mailbox about to be proven by a code) is refused: no account
    /// holds the address, the caller is not adding it to an account of theirs (`principal`, not an
    /// anonymous one), and neither the mode nor an invitation allows a new account. Always
    /// false when `open`, with nothing read; otherwise the same reads whatever the answer.
    public func refusesSignUp(email: String, linkingTo principal: Principal?) async throws -> Bool {
        guard mode != .open, let store else { return false }
        if let principal, !principal.user.isAnonymous { return false }
        let known = try await store.read([.userByEmail(email)]) { $0.user(email: email) != nil }
        let allowed = try await allowsNewAccount(email: email, emailVerified: true)
        return !known && !allowed
    }

    /// Mails `email` that it has no account here and how to get one (an invitation from the
    /// operator): what a closed sign-up sends where an open one would send a code.
    public func mailNoAccount(to email: String) async throws {
        try await mailer?.send(template: Self.noAccountTemplate, to: email, values: [:])
    }

    /// The mail's template: the kernel catalog's `kernel.mail.no_account.*` sentences.
    package static let noAccountMail = MailTemplate(
        subject: "[[kernel.mail.no_account.subject]]",
        text: """
            [[kernel.mail.no_account.asked]]

            [[kernel.mail.no_account.ask]]
            """,
        html: """
            <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
            <p>[[kernel.mail.no_account.asked]]</p>
            <p>[[kernel.mail.no_account.ask]]</p>
            </body></html>
            """)
}
