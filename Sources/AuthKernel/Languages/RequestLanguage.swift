import Synchronization

/// The language one request is answered in, for the task that handles it: the best of its
/// `Accept-Language` the catalogs have; failing that, once the signed-in person is known, their
/// `locale`; failing that, English. Mail and jobs that speak for one person set it outright.
package final class RequestLanguage: Sendable {
    /// The request's, read by ``Messages/language``.
    @TaskLocal package static var current: RequestLanguage?

    private let messages: Messages?
    private let chosen: Mutex<String?>
    /// Whether `Accept-Language` chose it (a person's `locale` then does not replace it).
    private let fromHeader: Bool

    /// The first language the request's `Accept-Language` names, whether or not there is a
    /// catalog for it: a new account's `locale`.
    package let preferred: String?

    /// The language for a request's `Accept-Language`.
    package init(acceptLanguage: String?, messages: Messages) {
        let negotiated = messages.negotiate(acceptLanguage)
        preferred = LanguageTag.accepted(acceptLanguage).first?.description
        self.messages = messages
        self.chosen = Mutex(negotiated)
        self.fromHeader = negotiated != nil
    }

    /// A language fixed in advance (a tag ``Messages/languages`` holds).
    package init(fixed language: String?) {
        preferred = language
        self.messages = nil
        self.chosen = Mutex(language)
        self.fromHeader = true
    }

    /// The language, or nil for English.
    package var value: String? { chosen.withLock { $0 } }

    /// The signed-in person's `locale`, where the request's `Accept-Language` named no language authd has.
    package func fallBack(to locale: String?) {
        guard !fromHeader, let messages, let hit = messages.available(locale) else { return }
        chosen.withLock { $0 = hit }
    }
}
