import AuthKernel
import Foundation
import Testing

/// Contract §18: every sentence comes from a catalog, and every shipped language has every key.
/// A key missing from a translation, a translation of an English text that has since changed, a
/// placeholder or a tag lost in translation, or a `[[key]]` no catalog has, fails here.
struct MessageCatalogCompletenessTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The languages shipped beside English.
    static let shipped = ["de"]

    /// Every English catalog in the sources, with the path of each translation beside it.
    static func catalogs() throws -> [(english: String, translations: [String: String])] {
        let sources = root.appendingPathComponent("Sources").path
        let all = try #require(FileManager.default.subpaths(atPath: sources)).filter { $0.hasSuffix(".po") }.sorted()
        return all.filter { $0.hasSuffix("/en.po") || $0.hasSuffix("-en.po") }.map { english in
            let stem = String(english.dropLast("en.po".count))
            return (sources + "/" + english, Dictionary(uniqueKeysWithValues: shipped.map { ($0, sources + "/" + stem + $0 + ".po") }))
        }
    }

    static func read(_ path: String) throws -> POFile {
        try POFile(parsing: try String(contentsOfFile: path, encoding: .utf8), name: path)
    }

    static func placeholders(_ text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found.sorted()
    }

    static func tags(_ text: String) -> [String] {
        text.components(separatedBy: "<").dropFirst().compactMap { $0.split(whereSeparator: { $0 == " " || $0 == ">" }).first.map(String.init) }.sorted()
    }

    @Test func everyShippedLanguageHasEveryKeyTranslatedFromTheCurrentEnglish() throws {
        let catalogs = try Self.catalogs()
        #expect(catalogs.count >= 10, "the kernel's, the server's two and the providers' catalogs are found")
        var problems: [String] = []
        for catalog in catalogs {
            let english = try Self.read(catalog.english)
            #expect(english.header["Plural-Forms"] != nil, "\(catalog.english) says its plural forms")
            let keys = english.entries.map(\.key)
            #expect(Set(keys).count == keys.count, "\(catalog.english) has a key twice")
            for (language, path) in catalog.translations {
                guard FileManager.default.fileExists(atPath: path) else {
                    problems.append("\(path) is missing")
                    continue
                }
                let translated = Dictionary(try Self.read(path).entries.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
                for entry in english.entries {
                    guard let t = translated[entry.key] else {
                        problems.append("\(language): \(entry.key) is missing from \(path)")
                        continue
                    }
                    if t.english != entry.english || t.englishPlural != entry.englishPlural {
                        problems.append("\(language): \(entry.key) translates an older English (\(t.english.prefix(40)))")
                    }
                    if t.forms.isEmpty || t.forms.contains(where: \.isEmpty) { problems.append("\(language): \(entry.key) is not translated") }
                    for form in t.forms where !form.isEmpty {
                        if Set(Self.placeholders(form)) != Set(Self.placeholders(entry.english)) {
                            problems.append("\(language): \(entry.key) has placeholders \(Self.placeholders(form)), English \(Self.placeholders(entry.english))")
                        }
                        if Self.tags(form) != Self.tags(entry.english) {
                            problems.append("\(language): \(entry.key) has tags \(Self.tags(form)), English \(Self.tags(entry.english))")
                        }
                    }
                }
                for extra in Set(translated.keys).subtracting(keys) { problems.append("\(language): \(extra) in \(path) is not in English") }
            }
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.sorted().joined(separator: "\n"))")
    }

    @Test func everyKeyThePagesTheMailAndTheCodeAskForIsInAnEnglishCatalog() throws {
        var known = Set<String>()
        for catalog in try Self.catalogs() { known.formUnion(try Self.read(catalog.english).entries.map(\.key)) }
        let sources = Self.root.appendingPathComponent("Sources").path
        let files = try #require(FileManager.default.subpaths(atPath: sources)).filter { $0.hasSuffix(".mustache") || $0.hasSuffix(".swift") }
        var asked: [(file: String, key: String)] = []
        // Keys are dotted and lower case (`[[String]]` in Swift is a type, not a key).
        let keyPattern = try Regex(#"\[\[([a-z0-9_-]+\.[a-z0-9_.-]+)\]\]"#)
        let callPattern = try Regex(#"(?:\.text|\.plural|\.worded)\(\s*"([a-z0-9_-]+\.[a-z0-9_.-]+)""#)
        let catalogPattern = try Regex(#"code\(catalog: "([a-z0-9_.-]+)"\)"#)
        for file in files {
            // Documentation comments show made-up keys of an example provider.
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("///") }.joined(separator: "\n")
            for match in text.matches(of: keyPattern) { asked.append((file, String(text[match.output[1].range!]))) }
            guard file.hasSuffix(".swift"), !file.contains(".docc/") else { continue }
            for match in text.matches(of: callPattern) { asked.append((file, String(text[match.output[1].range!]))) }
            for match in text.matches(of: catalogPattern) {
                let key = String(text[match.output[1].range!])
                asked += ["subject", "lead", "tail"].map { (file, key + "." + $0) }
            }
        }
        #expect(asked.count > 300, "the pages' sentences are asked for by key")
        // A key ending in a dot is the start of keys made in code (`password.rule.` + a rule's name).
        let missing = asked.filter { asked in
            asked.key.hasSuffix(".") ? !known.contains { $0.hasPrefix(asked.key) } : !known.contains(asked.key)
        }
        #expect(missing.isEmpty, "keys no English catalog has:\n\(missing.map { "\($0.file): \($0.key)" }.joined(separator: "\n"))")
    }
}
