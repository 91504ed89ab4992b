package import Foundation
import Synchronization

/// Every sentence authd shows or mails, by key, in each language it has a catalog for (gettext PO
/// files: the kernel's, the server's, each provider's, and an operator's in `DATA/locales/`).
///
/// A key is looked up in the language asked for, then in the shorter tags it falls back to
/// (`de-AT`, `de`), then in English; text takes `{{name}}` placeholders. A request's language (its
/// `Accept-Language`, then the signed-in person's `locale`) is the task's ``language`` while it is
/// handled, so a provider's code asks for a sentence without passing one:
///
/// ```swift
/// let notice = kernel.messages.text("passkey.renamed")
/// ```
public final class Messages: Sendable {
    /// The language of the request being handled (a tag ``languages`` holds), or nil for English.
    public static var language: String? { RequestLanguage.current?.value }

    struct Catalog: Sendable {
        var entries: [String: POFile.Entry] = [:]
        var plural = PluralRule.oneOther
        /// Who shipped each key (`kernel`, `authd`, a provider's id).
        var owners: [String: String] = [:]
    }

    private let catalogs = Mutex<[String: Catalog]>([:])
    /// `DATA/locales`, or nil.
    package let folder: String?

    /// The kernel's own catalogs (`kernel.*`); the server's, the providers' and the operator's are
    /// added with ``register(_:owner:prefix:)`` and ``loadOperatorCatalogs()``.
    package init(folder: String?) {
        self.folder = folder
        do {
            try register(Self.kernelCatalogs, owner: "kernel", prefix: "kernel.")
        } catch {
            preconditionFailure("the kernel's message catalogs do not parse: \(error)")
        }
    }

    static let kernelCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]

    /// The languages there are catalogs for, English first.
    public var languages: [String] {
        catalogs.withLock { ["en"] + $0.keys.filter { $0 != "en" }.sorted() }
    }

    /// Adds catalogs shipped with code: the kernel's, the server's, a provider's.
    /// - Parameters:
    ///   - owner: who ships them; a provider's keys must start with its id and a dot.
    ///   - prefix: what every key must start with, or nil.
    /// - Throws: ``ConfigError`` for a file that does not parse, a key outside `prefix`, a key
    ///   another owner already has, or a catalog without English.
    package func register(_ declarations: [MessageCatalogDeclaration], owner: String, prefix: String?) throws(ConfigError) {
        guard declarations.isEmpty || declarations.contains(where: { $0.language == "en" }) else {
            throw ConfigError("\(owner)'s message catalogs have no English one (\"en\"): English is what other languages fall back to")
        }
        var parsed: [(String, POFile)] = []
        for declaration in declarations {
            guard let tag = LanguageTag(declaration.language) else {
                throw ConfigError("\(owner) ships a message catalog for \"\(declaration.language)\", which is not a BCP 47 language tag")
            }
            let file = try POFile(parsing: declaration.source, name: "\(owner)'s \(tag) catalog")
            if let prefix, let outside = file.entries.first(where: { !$0.key.hasPrefix(prefix) }) {
                throw ConfigError("\(owner)'s message \"\(outside.key)\" must be named \"\(prefix)NAME\"")
            }
            parsed.append((tag.description, file))
        }
        try catalogs.withLock { catalogs throws(ConfigError) in
            for (language, file) in parsed {
                var catalog = catalogs[language] ?? Catalog()
                if let forms = file.header["Plural-Forms"] { catalog.plural = try PluralRule(parsing: forms, name: "\(owner)'s \(language) catalog") }
                for entry in file.entries {
                    if let other = catalog.owners[entry.key], other != owner {
                        throw ConfigError("the message \"\(entry.key)\" is shipped by both \(other) and \(owner)")
                    }
                    catalog.entries[entry.key] = entry
                    catalog.owners[entry.key] = owner
                }
                catalogs[language] = catalog
            }
        }
    }

    /// Reads the operator's catalogs, `DATA/locales/LANGUAGE.po`: a new language, or entries that
    /// replace shipped ones (English's too). Read once, at start-up.
    /// - Throws: ``ConfigError`` for a file that does not parse or is not named by a language tag.
    package func loadOperatorCatalogs() throws(ConfigError) {
        guard let folder, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names.sorted() where name.hasSuffix(".po") {
            guard let tag = LanguageTag(name.dropLast(3)) else {
                throw ConfigError("\(folder)/\(name): a catalog is named by its language, e.g. de.po or pt-BR.po")
            }
            let path = folder + "/" + name
            guard let source = try? String(contentsOfFile: path, encoding: .utf8) else { throw ConfigError("\(path): not readable as UTF-8") }
            let file = try POFile(parsing: source, name: path)
            let plural = try file.header["Plural-Forms"].map { forms throws(ConfigError) in try PluralRule(parsing: forms, name: path) }
            catalogs.withLock { catalogs in
                var catalog = catalogs[tag.description] ?? Catalog()
                if let plural { catalog.plural = plural }
                for entry in file.entries {
                    // A replacement keeps the shipped English for translators' tools; only its text counts.
                    catalog.entries[entry.key] = entry
                    catalog.owners[entry.key] = catalog.owners[entry.key] ?? "DATA/locales"
                }
                catalogs[tag.description] = catalog
            }
        }
    }

    /// The languages to look in for `language`, best first, ending in English.
    func chain(_ language: String?) -> [String] {
        var out = (language.flatMap { LanguageTag($0) }?.fallbacks ?? []).filter { $0 != "en" }
        out.append("en")
        return out
    }

    /// The language of ``languages`` that serves a tag best (`de-AT` is served by `de`), or nil.
    public func available(_ tag: String?) -> String? {
        guard let tag = tag.flatMap({ LanguageTag($0) }) else { return nil }
        let have = catalogs.withLock { Set($0.keys) }.union(["en"])
        return tag.fallbacks.first { have.contains($0) }
    }

    /// The best language of ``languages`` for an `Accept-Language` header, or nil when it names none.
    public func negotiate(_ acceptLanguage: String?) -> String? {
        for tag in LanguageTag.accepted(acceptLanguage) {
            if let hit = available(tag.description) { return hit }
        }
        return nil
    }

    /// The sentence for `key` in `language` (or the task's ``language``), its `{{name}}`
    /// placeholders filled from `values`. A key no catalog has comes back as itself.
    public func text(_ key: String, _ values: [String: String] = [:], language: String? = nil) -> String {
        let raw = catalogs.withLock { catalogs -> String? in
            for lang in chain(language ?? Self.language) {
                guard let entry = catalogs[lang]?.entries[key] else { continue }
                if let form = entry.forms.first, !form.isEmpty { return form }
                if lang == "en" { return entry.english }
            }
            return nil
        }
        guard let raw else { return key }
        return values.isEmpty ? raw : MailTemplates.fill(raw, values)
    }

    /// The sentence for `key` in the form `count` takes (a PO entry with `msgid_plural`), with
    /// `{{count}}` (the number as the language writes it, unless `values` has its own) and `values` filled.
    public func plural(_ key: String, count: Int, _ values: [String: String] = [:], language: String? = nil) -> String {
        let raw = catalogs.withLock { catalogs -> String? in
            for lang in chain(language ?? Self.language) {
                guard let catalog = catalogs[lang], let entry = catalog.entries[key] else { continue }
                let index = catalog.plural.form(count)
                if index < entry.forms.count, !entry.forms[index].isEmpty { return entry.forms[index] }
                if lang == "en" { return count == 1 ? entry.english : entry.englishPlural ?? entry.english }
            }
            return nil
        }
        guard let raw else { return key }
        var all = values
        all["count"] = all["count"] ?? number(count, language: language)
        return MailTemplates.fill(raw, all)
    }

    /// An error as a sentence on a page, in the task's language: its own wording
    /// (``AuthError/worded(_:_:)``); else in English its message, in another language the
    /// general sentence of its code (`kernel.error.CODE`); and how long to wait when it says.
    ///
    /// ```swift
    /// let step = PageStep(template: "sms.code", error: kernel.messages.sentence(error), status: error.status)
    /// ```
    public func sentence(_ error: AuthError) -> String {
        var text: String
        if let worded = error.sentence {
            text = self.text(worded.key, worded.values)
        } else if (Self.language ?? "en") == "en" || !has("kernel.error." + error.code) {
            text = error.message
        } else {
            text = self.text("kernel.error." + error.code)
        }
        if let wait = error.retryAfter { text += " " + plural("kernel.error.try_again_in", count: wait, ["count": String(wait)]) }
        return text
    }

    /// Whether the task's language (or the one it falls back to before English) has `key`.
    func has(_ key: String) -> Bool {
        catalogs.withLock { catalogs in chain(Self.language).dropLast().contains { catalogs[$0]?.entries[key].map { !($0.forms.first ?? "").isEmpty } ?? false } }
    }

    /// How long something lasts, in words: "5 minutes", "1 hour", "90 seconds" (`kernel.lifetime.*`).
    public func lifetime(_ seconds: Int, language: String? = nil) -> String {
        if seconds > 0, seconds % 3600 == 0 { return plural("kernel.lifetime.hours", count: seconds / 3600, language: language) }
        if seconds > 0, seconds % 60 == 0 { return plural("kernel.lifetime.minutes", count: seconds / 60, language: language) }
        return plural("kernel.lifetime.seconds", count: seconds, language: language)
    }

    /// A whole number as the language writes it ("12,345"; German "12.345").
    public func number(_ n: Int, language: String? = nil) -> String {
        let formatter = NumberFormatter()
        formatter.locale = Self.locale(language ?? Self.language)
        formatter.numberStyle = .decimal
        return formatter.string(from: NSNumber(value: n)) ?? String(n)
    }

    /// Foundation's locale for dates and numbers in `language`: English as written in Britain
    /// ("28 Nov 2026"), the others as their tag says.
    package static func locale(_ language: String?) -> Locale {
        guard let language, language != "en" else { return Locale(identifier: "en_GB") }
        return Locale(identifier: language)
    }

    /// A template's source with each `[[key]]` replaced by its sentence in `language` (unfilled:
    /// its `{{name}}` placeholders become the template's own). A sentence is template source,
    /// like the template: a catalog is trusted as the templates are.
    package func localize(template source: String, language: String) -> String {
        guard source.contains("[[") else { return source }
        var out = ""
        var rest = source[...]
        while let open = rest.range(of: "[[") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "]]"), POFile.isValidKey(String(rest[open.upperBound..<close.lowerBound])) else {
                out += "[["
                rest = rest[open.upperBound...]
                continue
            }
            out += text(String(rest[open.upperBound..<close.lowerBound]), language: language)
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    /// A PO file of every key there is, English as `msgid`, `language`'s translation (or nothing) as
    /// `msgstr`: where a translator starts a catalog for `DATA/locales/`.
    package func po(language: String) -> String {
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
        }
        return catalogs.withLock { catalogs in
            let english = catalogs["en"] ?? Catalog()
            let target = language == "en" ? nil : catalogs[language]
            var out = "# authd's message catalog for \(language): every page and mail sentence, keyed by msgctxt.\n"
            out += "# Save as DATA/locales/\(language).po; an empty msgstr is shown in English.\n"
            out += "msgid \"\"\nmsgstr \"\"\n\"Language: \(language)\\n\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
            out += "\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n"
            for key in english.entries.keys.sorted() {
                let entry = english.entries[key]!
                let forms = target?.entries[key]?.forms ?? []
                out += "\n#. \(english.owners[key] ?? "")\nmsgctxt \(quoted(key))\nmsgid \(quoted(entry.english))\n"
                if let plural = entry.englishPlural {
                    out += "msgid_plural \(quoted(plural))\n"
                    for i in 0..<max(2, forms.count) { out += "msgstr[\(i)] \(quoted(i < forms.count ? forms[i] : ""))\n" }
                } else {
                    out += "msgstr \(quoted(forms.first ?? ""))\n"
                }
            }
            return out
        }
    }
}
