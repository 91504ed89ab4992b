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
    /// How each provider's method is named in the mail (``AuthProvider/methodName``).
    private let names: [String: String]

    /// The template sent.
    package static let template = "kernel.sign_in_method_added"

    /// Creates the notices.
    package init(mailer: Mailer, clock: any AuthClock, logger: Logger, names: [String: String] = [:]) {
        self.mailer = mailer
        self.clock = clock
        self.logger = logger
        self.names = names
    }

    /// Mails `before`'s owner that `added` were linked, if `before` is a non-anonymous account with a verified email.
    func notify(before: UserRecord, added: [Identity]) async {
        var seen = Set<String>()
        await notify(before, methods: added.map(\.provider).filter { seen.insert($0).inserted }.map { names[$0] ?? $0 })
    }

    /// Mails `user`'s owner that `methods` (as a person would name them) were added, under the same rule.
    func notify(_ before: UserRecord, methods: [String]) async {
        guard !methods.isEmpty, !before.isAnonymous, before.emailVerified, let email = before.email else { return }
        do {
            try await mailer.send(
                template: Self.template, to: email,
                values: ["method": methods.joined(separator: ", "), "when": Timestamp.string(clock.now())], waitForDelivery: false
            )
        } catch {
            logger.error("could not mail the sign-in-method notice", metadata: ["user.id": "\(before.id.lowercased)", "error": "\(error)"])
        }
    }
}
