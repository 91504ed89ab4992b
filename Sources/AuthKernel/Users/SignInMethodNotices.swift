import AuthStorage
import Foundation
package import Logging

/// Mails a user when a way to sign in is added to their account (a PIN, a password, a linked
/// Apple ID or email), so that a method planted with a stolen session does not go unnoticed.
///
/// Only accounts that are not anonymous and have a verified email get one, sent to that email.
/// The message is queued durably before the change is answered; delivery is not waited for.
package final class SignInMethodNotices: Sendable {
    let mailer: Mailer
    let clock: any AuthClock
    let logger: Logger
    /// Where the "Not you?" link's token is kept (only its hash), and the link's base.
    let tokens: SingleUseTokens?
    let issuer: @Sendable () -> String
    /// How each provider's method is named in the mail (``AuthProvider/methodName``).
    private let names: [String: String]
    /// The provider each of those English names is, for its catalog's `PROVIDER.method_name`.
    private let providers: [String: String]

    /// The template sent.
    package static let template = "kernel.sign_in_method_added"
    /// The purpose of the "Not you?" links' tokens.
    package static let notMePurpose = "kernel.not_me"
    /// How long a "Not you?" link works.
    package static let notMeTTL = 7 * 86_400

    /// Creates the notices; without `tokens` they carry no "Not you?" link.
    package init(
        mailer: Mailer, clock: any AuthClock, logger: Logger, names: [String: String] = [:], tokens: SingleUseTokens? = nil,
        issuer: @escaping @Sendable () -> String = { "" }
    ) {
        self.mailer = mailer
        self.clock = clock
        self.logger = logger
        self.names = names
        self.providers = Dictionary(names.map { ($0.value, $0.key) }, uniquingKeysWith: { a, b in min(a, b) })
        self.tokens = tokens
        self.issuer = issuer
    }

    /// Mails `before`'s owner that `added` were linked, if `before` is a non-anonymous account with a verified email.
    func notify(before: UserRecord, added: [Identity]) async {
        var seen = Set<String>()
        await notify(
            before, methods: added.map(\.provider).filter { seen.insert($0).inserted }.map { names[$0] ?? $0 },
            credentials: added.map { AddedCredential.identity($0) })
    }

    /// Mails `user`'s owner that `methods` (as a person would name them) were added, under the same
    /// rule, with a "Not you?" link that takes `credentials` away.
    func notify(_ before: UserRecord, methods: [String], credentials: [AddedCredential]) async {
        guard !methods.isEmpty, !before.isAnonymous, before.emailVerified, let email = before.email else { return }
        do {
            // The mail's language (the account's `locale`, else the request's) words its values too.
            let messages = mailer.templates.messages
            let language = messages.available(await mailer.language(nil, of: email)) ?? "en"
            let method = methods.map { worded($0, messages: messages, language: language) }.joined(separator: ", ")
            let now = clock.now()
            var values = ["method": method, "when": messages.mailTime(now, language: language), "not_me": ""]
            if let tokens, !credentials.isEmpty {
                let token = try await tokens.issue(
                    purpose: Self.notMePurpose, subject: before.id.lowercased, ttl: Self.notMeTTL,
                    payload: ["method": .string(method), "when": .string(Timestamp.string(now)), "remove": .array(credentials.map { .object($0.payload) })])
                values["not_me"] = issuer() + "/not-me?token=" + token
            }
            try await mailer.send(template: Self.template, to: email, values: values, language: language, waitForDelivery: false)
        } catch {
            logger.error("could not mail the sign-in-method notice", metadata: ["user.id": "\(before.id.lowercased)", "error": "\(error)"])
        }
    }

    /// A method the server names by the catalog sentence `key` with `{{placeholder}}` (an API
    /// key, a device), worded in the mail's language when it is sent; an empty `value` is the
    /// sentence `otherwise` ("unnamed").
    package static func catalogMethod(_ key: String, _ placeholder: String, _ value: String, otherwise: String = "") -> String {
        [key, otherwise, placeholder, value].joined(separator: "\u{0}")
    }

    /// A method as the mail names it in `language`: a provider's ``AuthProvider/methodName`` by its
    /// catalog's `PROVIDER.method_name` where that has it, anything else as given.
    func worded(_ method: String, messages: Messages, language: String) -> String {
        let parts = method.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 4 {
            let value = parts[3].isEmpty ? messages.text(parts[1], language: language) : parts[3]
            return messages.text(parts[0], [parts[2]: value], language: language)
        }
        guard let provider = providers[method] else { return method }
        let key = provider + ".method_name"
        let text = messages.text(key, language: language)
        return text == key ? method : text
    }
}
