import Foundation
package import Logging
import Synchronization

/// One mail's wording: subject, text and HTML, with `{{name}}` placeholders and `[[key]]` sentences
/// from the message catalogs (``Messages``), put in the recipient's language.
public struct MailTemplate: Sendable {
    /// How long a code lives, in English: "5 minutes", "1 minute", "90 seconds", "1 hour".
    @available(*, deprecated, message: "pass `lifetime:` to Mailer.send, which words it in the recipient's language")
    public static func lifetime(_ seconds: Int) -> String { MailTemplates.lifetime(seconds) }

    /// A mail that carries a code, worded by the provider's message catalog: the keys `KEY.subject`,
    /// `KEY.lead` (before the code) and `KEY.tail` (after it), in the recipient's language, as text
    /// and as HTML with the code set large. Their placeholders (`{{code}}`, `{{lifetime}}`,
    /// `{{product_name}}`) work in all three.
    ///
    /// ```swift
    /// let template = MailTemplate.code(catalog: "email.sign_in_code")
    /// ```
    public static func code(catalog key: String) -> MailTemplate {
        code(subject: "[[\(key).subject]]", lead: "[[\(key).lead]]", tail: "[[\(key).tail]]")
    }

    /// A mail that carries a code: `lead` then the code (`{{code}}`) then `tail`, as text and as
    /// HTML with the code set large. Placeholders work in all three parts.
    ///
    /// One language only: a provider with a message catalog uses ``code(catalog:)``.
    public static func code(subject: String, lead: String, tail: String) -> MailTemplate {
        MailTemplate(subject: subject, text: "\(lead) {{code}}.\n\n\(tail)", html: MailTemplates.codeHTML(lead, tail))
    }

    /// Subject line.
    public var subject: String
    /// Plain-text body.
    public var text: String
    /// HTML body; values put in it are HTML-escaped.
    public var html: String

    /// Creates a template.
    public init(subject: String, text: String, html: String) {
        self.subject = subject
        self.text = text
        self.html = html
    }
}

/// The mails authd sends, by name, with defaults built in and per-file overrides in
/// `DATA/templates/NAME.subject`, `NAME.txt`, `NAME.html` (read at each send, so edits need no restart).
///
/// Names are `PROVIDER.NAME`: a template belongs to the provider that registers it, the kernel's own
/// are `kernel.NAME`, and a second registration of a name is a configuration error, so one
/// provider's mail can never replace another's. An override file under the name's old bare form
/// (`sign_in_code.subject` for `email.sign_in_code`) is still read, with a warning naming the new one.
///
/// Every template gets `{{product_name}}`, and `{{code}}` when a code is sent; the kernel's own,
/// `kernel.sign_in_method_added`, gets `{{method}}` and `{{when}}`. Providers register theirs at
/// start-up (``Mailer/register(_:_:)``).
package final class MailTemplates: Sendable {
    /// The folder of overrides.
    package let folder: String?
    /// `mail.product_name`.
    package let productName: String
    /// The sentences `[[key]]` stands for.
    package let messages: Messages
    private let defaults: Mutex<[String: MailTemplate]>
    /// Old override names already warned about, so a busy server says it once.
    private let warned = Mutex<Set<String>>([])
    private let logger: Logger?

    /// Creates the set with the built-in templates.
    package init(folder: String?, productName: String, messages: Messages = Messages(folder: nil), logger: Logger? = nil) {
        self.folder = folder
        self.messages = messages
        self.productName = productName
        self.logger = logger
        defaults = Mutex(Self.builtIn)
    }

    /// The registered names, sorted.
    package var names: [String] { defaults.withLock { $0.keys.sorted() } }

    /// Whether `name` has the `PROVIDER.NAME` form: two parts of lower-case letters, digits, `_` and
    /// `-`, joined by one dot.
    package static func isValidName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { part in
            !part.isEmpty && part.utf8.count <= 64 && part.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }
        }
    }

    /// Adds a template (a provider's own mail).
    /// - Throws: ``ConfigError`` for a name not of the form `PROVIDER.NAME`, or one already registered.
    package func register(_ name: String, _ template: MailTemplate) throws {
        guard Self.isValidName(name) else {
            throw ConfigError("mail template \"\(name)\" must be named PROVIDER.NAME (lower case), e.g. \"email.sign_in_code\"")
        }
        try defaults.withLock { defaults throws(ConfigError) in
            guard defaults[name] == nil else {
                throw ConfigError("mail template \"\(name)\" is registered twice: two providers (or one, twice) claim the same mail")
            }
            defaults[name] = template
        }
    }

    /// Renders a template into a message.
    /// - Precondition: `name` is a registered template.
    /// The override files in the folder for `name` (`NAME.subject`, `.txt`, `.html`), by path.
    /// A language's own overrides (`DATA/templates/de/NAME.txt`) are listed too.
    package func overrides(of name: String) -> [String] {
        guard let folder else { return [] }
        let languages = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { LanguageTag($0)?.description == $0 }.sorted()
        return ([""] + languages.map { $0 + "/" }).flatMap { dir in [".subject", ".txt", ".html"].map { folder + "/" + dir + name + $0 } }
            .filter { FileManager.default.fileExists(atPath: $0) }
    }

    /// Renders a template into a message in `language` (its `[[key]]` sentences, its lifetime in
    /// words); an override file in `DATA/templates/LANGUAGE/` comes before a bare one.
    package func render(_ name: String, to: String, values: [String: String], code: String? = nil, lifetime: Int? = nil, language: String? = nil) -> MailMessage {
        guard var template = defaults.withLock({ $0[name] }) else { preconditionFailure("no mail template named \(name)") }
        let language = messages.available(language) ?? "en"
        if let folder {
            let base = folder + "/" + name
            let legacy = name.split(separator: ".").last.map { folder + "/" + $0 } ?? base
            let own = messages.chain(language).map { folder + "/" + $0 + "/" + name }
            func read(_ suffix: String) -> String? {
                for path in own { if let s = try? String(contentsOfFile: path + suffix, encoding: .utf8) { return s } }
                if let s = try? String(contentsOfFile: base + suffix, encoding: .utf8) { return s }
                guard let s = try? String(contentsOfFile: legacy + suffix, encoding: .utf8) else { return nil }
                if warned.withLock({ $0.insert(legacy + suffix).inserted }) {
                    logger?.warning(
                        "mail template override read under its old name; rename it",
                        metadata: ["file": "\(legacy + suffix)", "rename_to": "\(base + suffix)"])
                }
                return s
            }
            if let s = read(".subject") { template.subject = s.trimmingCharacters(in: .whitespacesAndNewlines) }
            if let t = read(".txt") { template.text = t }
            if let h = read(".html") { template.html = h }
        }
        template.subject = messages.localize(template: template.subject, language: language)
        template.text = messages.localize(template: template.text, language: language)
        template.html = messages.localize(template: template.html, language: language)
        var all = values
        all["product_name"] = productName
        if let lifetime { all["lifetime"] = messages.lifetime(lifetime, language: language) }
        // The code a mail exists for is a placeholder like any other: senders need not pass it twice.
        if let code { all["code"] = code }
        // A subject is one line, whatever a value or an override holds.
        let subject = Self.fill(template.subject, all).components(separatedBy: .newlines).joined(separator: " ")
        return MailMessage(
            to: to, language: language, subject: subject, text: Self.fill(template.text, all),
            html: Self.fill(template.html, all.mapValues(MailComposer.escapeHTML)), code: code, template: name
        )
    }

    /// Replaces each `{{name}}` in one pass: a value that itself holds `{{…}}` (a device name a
    /// client chose) is not expanded.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        var out = ""
        var rest = template[...]
        while let open = rest.range(of: "{{") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let name = String(rest[open.upperBound..<close.lowerBound])
            out += values[name] ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    /// "5 minutes", "1 minute", "90 seconds".
    package static func lifetime(_ seconds: Int) -> String {
        if seconds % 3600 == 0 { return "\(seconds / 3600) hour\(seconds == 3600 ? "" : "s")" }
        if seconds % 60 == 0 { return "\(seconds / 60) minute\(seconds == 60 ? "" : "s")" }
        return "\(seconds) seconds"
    }

    /// The HTML of a code mail: a lead sentence, the code large, a closing sentence.
    static func codeHTML(_ lead: String, _ tail: String) -> String {
        """
        <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
        <p>\(lead)</p>
        <p style="font-size:28px;font-weight:bold;letter-spacing:6px;font-family:monospace">{{code}}</p>
        <p>\(tail)</p>
        <p style="color:#888;font-size:12px">{{product_name}}</p>
        </body></html>
        """
    }

    static let builtIn: [String: MailTemplate] = [
        SignupPolicy.noAccountTemplate: SignupPolicy.noAccountMail,
        CredentialRemovalNotice.template: CredentialRemovalNotice.mail,
        Invitations.template: Invitations.mail,
        Invitations.codeTemplate: Invitations.codeMail,
        SignInMethodNotices.template: MailTemplate(
            subject: "[[kernel.mail.sign_in_method_added.subject]]",
            text: """
                [[kernel.mail.sign_in_method_added.added]]

                [[kernel.mail.sign_in_method_added.not_me]]
                {{not_me}}
                """,
            html: """
                <!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222">
                <p>[[kernel.mail.sign_in_method_added.added]]</p>
                <p><strong>[[kernel.mail.sign_in_method_added.not_you]]</strong> [[kernel.mail.sign_in_method_added.remove_link]]</p>
                </body></html>
                """
        ),
    ]
}
