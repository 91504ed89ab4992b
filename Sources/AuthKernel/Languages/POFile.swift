/// A gettext PO file as authd reads its message catalogs: each entry's `msgctxt` is the message's
/// key, `msgid` its English text, `msgstr` the translation (empty in the English catalog, which
/// means "as `msgid`"). Plural entries carry `msgid_plural` and `msgstr[N]`. Entries marked
/// `#, fuzzy` are skipped, as gettext skips them: a translator has not confirmed them.
package struct POFile: Sendable {
    /// One entry.
    package struct Entry: Sendable, Equatable {
        package var key: String
        package var english: String
        package var englishPlural: String?
        /// The translation's forms (one for a singular entry); empty strings where untranslated.
        package var forms: [String]
    }

    /// The header's fields (`Language`, `Plural-Forms`).
    package var header: [String: String] = [:]
    package var entries: [Entry] = []

    /// The longest catalog read: an operator's file is read at start-up, and a shipped one is far smaller.
    static let maxBytes = 4 << 20

    /// Parses `source`.
    /// - Throws: ``ConfigError`` naming the line of the first malformed entry.
    package init(parsing source: String, name: String) throws(ConfigError) {
        guard source.utf8.count <= Self.maxBytes else { throw ConfigError("\(name): a message catalog is at most 4 MiB") }
        var current: [String: String] = [:]
        var forms: [Int: String] = [:]
        var field: String?
        var fuzzy = false
        var lineNumber = 0
        var entryLine = 0

        func finish() throws(ConfigError) {
            defer {
                current = [:]
                forms = [:]
                field = nil
                fuzzy = false
            }
            guard !current.isEmpty || !forms.isEmpty else { return }
            guard let english = current["msgid"] else { throw ConfigError("\(name):\(entryLine): an entry without msgid") }
            if english.isEmpty, current["msgctxt"] == nil {
                for line in (current["msgstr"] ?? "").split(separator: "\n") {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    header[String(line[..<colon]).trimmed] = String(line[line.index(after: colon)...]).trimmed
                }
                return
            }
            guard !fuzzy else { return }
            guard let key = current["msgctxt"], Self.isValidKey(key) else {
                throw ConfigError("\(name):\(entryLine): every message needs a key as its msgctxt (letters, digits, \"_\", \"-\" and dots)")
            }
            let translated: [String]
            if let plural = current["msgid_plural"] {
                guard !forms.isEmpty, forms.keys.sorted() == Array(0..<forms.count) else {
                    throw ConfigError("\(name):\(entryLine): \"\(key)\" has msgid_plural but not msgstr[0], msgstr[1]…")
                }
                translated = (0..<forms.count).map { forms[$0]! }
                entries.append(Entry(key: key, english: english, englishPlural: plural, forms: translated))
            } else {
                guard forms.isEmpty else { throw ConfigError("\(name):\(entryLine): \"\(key)\" has msgstr[N] without msgid_plural") }
                entries.append(Entry(key: key, english: english, englishPlural: nil, forms: [current["msgstr"] ?? ""]))
            }
        }

        for raw in source.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = raw.trimmed
            if line.isEmpty {
                try finish()
                continue
            }
            if line.hasPrefix("#") {
                if line.hasPrefix("#,"), line.contains("fuzzy") {
                    if !current.isEmpty || !forms.isEmpty { try finish() }
                    fuzzy = true
                    entryLine = lineNumber
                }
                continue
            }
            if line.hasPrefix("\"") {
                guard let field else { throw ConfigError("\(name):\(lineNumber): a string continues no field") }
                let more = try Self.unquote(line, name: name, line: lineNumber)
                if field.hasPrefix("msgstr[") {
                    let n = Int(field.dropFirst(7).dropLast())!
                    forms[n, default: ""] += more
                } else {
                    current[field, default: ""] += more
                }
                continue
            }
            guard let space = line.firstIndex(of: " ") else { throw ConfigError("\(name):\(lineNumber): not a PO line: \(line.prefix(40))") }
            let keyword = String(line[..<space])
            let value = try Self.unquote(line[line.index(after: space)...].trimmed, name: name, line: lineNumber)
            if keyword == "msgctxt" || (keyword == "msgid" && current["msgid"] != nil) {
                // A new entry starts without a blank line between.
                if current["msgid"] != nil { try finish() }
            }
            if current.isEmpty && forms.isEmpty && !fuzzy { entryLine = lineNumber }
            switch keyword {
            case "msgctxt", "msgid", "msgid_plural", "msgstr":
                guard current[keyword] == nil else { throw ConfigError("\(name):\(lineNumber): \(keyword) twice in one entry") }
                current[keyword] = value
                field = keyword
            default:
                guard keyword.hasPrefix("msgstr["), keyword.hasSuffix("]"), let n = Int(keyword.dropFirst(7).dropLast()), (0..<8).contains(n) else {
                    throw ConfigError("\(name):\(lineNumber): unknown keyword \(keyword.prefix(20))")
                }
                forms[n] = value
                field = "msgstr[\(n)]"
            }
        }
        try finish()
    }

    /// Keys are dotted words: `login.title`, `email.code_sent`.
    static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 128
            && key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0) }
    }

    /// A quoted PO string's text, its C escapes undone.
    static func unquote(_ quoted: some StringProtocol, name: String, line: Int) throws(ConfigError) -> String {
        let s = String(quoted)
        guard s.count >= 2, s.hasPrefix("\""), s.hasSuffix("\"") else { throw ConfigError("\(name):\(line): a string must be in double quotes") }
        var out = ""
        var escaping = false
        for c in s.dropFirst().dropLast() {
            if escaping {
                switch c {
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "\"", "\\": out.append(c)
                default: throw ConfigError("\(name):\(line): unknown escape \\\(c)")
                }
                escaping = false
            } else if c == "\\" {
                escaping = true
            } else if c == "\"" {
                throw ConfigError("\(name):\(line): a double quote inside a string must be written \\\"")
            } else {
                out.append(c)
            }
        }
        guard !escaping else { throw ConfigError("\(name):\(line): a string ends in a backslash") }
        return out
    }
}

extension StringProtocol {
    fileprivate var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s.removeLast() }
        return String(s)
    }
}
