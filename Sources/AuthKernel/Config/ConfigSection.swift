public import AuthStorage
import Foundation
package import Synchronization
/// A JSON object from the configuration file, read key by key with type and range checks.
///
/// Every key read is remembered; ``rejectUnknownKeys()`` then fails on the ones nobody read,
/// so a typo such as `"code_tll"` stops start-up instead of being silently ignored.
///
/// A provider reads its own section in its initialiser; the server refuses the keys it did not read:
///
/// ```swift
/// init(kernel: Kernel, config: inout ConfigSection) throws {
///     linkTTL = try config.seconds("link_ttl", default: 900)
///     allowedDomains = try config.strings("allowed_domains", default: [])
///     perAddress = try config.rule("per_address", default: RateLimitRule(limit: 5, window: 3600))
/// }
/// ```
public struct ConfigSection: Sendable {
    /// Dotted path of this section, e.g. `email` or `tokens`.
    public let path: String
    private let values: [String: JSONValue]
    private var read: Set<String> = []
    /// The full paths a provider declared (array indices as `[]`); nil reads any key.
    private var declared: Set<String>?
    /// Whose declarations they are, for the error.
    private var declarer: String?
    /// The `AUTHD_*` variables over the file, and the record of what was read (nil in tests that
    /// parse a file alone).
    package var environment: ConfigEnvironment?
    /// The variable that set this whole section as JSON, if one did: its keys come from it.
    private var origin: String?

    /// Creates a section over `values` at `path` (empty for the top level).
    public init(path: String, values: [String: JSONValue]) {
        self.path = path
        self.values = values
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The key as an error names it: with the variable that set it, when one did.
    private func label(_ key: String) -> String {
        if let origin { return "\(name(key)) (in \(origin))" }
        if let variable = environment?.variable(for: name(key)) { return "\(name(key)) (\(variable.name))" }
        return name(key)
    }

    /// The JSON types a key is read as; a variable's text is converted to the one asked for.
    private enum Expected { case string, number, bool, array, object }

    /// Collects the dotted path of every key read while it is set: the check that
    /// `docs/configuration.md` names exactly the keys the parser knows.
    package final class KeyRecorder: Sendable {
        package let paths = Mutex<Set<String>>([])
        package init() {}
    }

    @TaskLocal package static var recorder: KeyRecorder?

    /// Restricts the keys that may be read to `keys` (relative, dotted), the settings `declarer`
    /// declared: a read of any other stops start-up, so the declarations cannot fall behind the code.
    package mutating func declare(_ keys: [String], by declarer: String) {
        declared = Set(keys.map(name))
        self.declarer = declarer
    }

    /// Throws when `key` is not among the declared settings (nor inside one, nor an object holding some).
    package func checkDeclared(_ key: String) throws(ConfigError) {
        guard let declared else { return }
        let full = Self.withoutIndices(name(key))
        if declared.contains(full) { return }
        var ancestor = full
        while let dot = ancestor.lastIndex(of: ".") {
            ancestor = String(ancestor[..<dot])
            if declared.contains(ancestor) { return }
        }
        if declared.contains(where: { $0.hasPrefix(full + ".") }) { return }
        throw ConfigError("\(declarer ?? "a provider") reads the setting \(full), which its `settings` do not declare")
    }

    /// `a[0].b` as `a[].b`: one declaration covers every element of an array.
    static func withoutIndices(_ path: String) -> String {
        var out = "", skipping = false
        for c in path {
            if c == "[" { skipping = true; out.append("[") } else if c == "]" { skipping = false; out.append("]") } else if !skipping { out.append(c) }
        }
        return out
    }

    private mutating func value(_ key: String, as expected: Expected) throws(ConfigError) -> JSONValue? {
        try checkDeclared(key)
        read.insert(key)
        Self.recorder?.paths.withLock { _ = $0.insert(name(key)) }
        if origin == nil, let variable = environment?.variable(for: name(key)) { return try Self.convert(variable, to: expected) }
        if case .null = values[key] { return nil }
        return values[key]
    }

    /// A variable's text as the type its key is read as (contract §14): strings verbatim, numbers
    /// and booleans parsed, lists and objects as JSON. The error names the variable, not the value
    /// (which may be a secret).
    private static func convert(_ variable: ConfigEnvironment.Variable, to expected: Expected) throws(ConfigError) -> JSONValue {
        if expected == .string { return .string(variable.text) }
        let parsed = try? JSONDecoder().decode(JSONValue.self, from: Data(variable.text.trimmingCharacters(in: .whitespaces).utf8))
        switch (expected, parsed) {
        case (.number, .number(let n)?): return .number(n)
        case (.bool, .bool(let b)?): return .bool(b)
        case (.array, .array(let a)?): return .array(a)
        case (.object, .object(let o)?): return .object(o)
        case (.number, _): throw ConfigError("\(variable.name) must be a number (\(variable.path))")
        case (.bool, _): throw ConfigError("\(variable.name) must be true or false (\(variable.path))")
        case (.array, _): throw ConfigError("\(variable.name) must be a JSON array (\(variable.path)), e.g. [\"a\",\"b\"]")
        default: throw ConfigError("\(variable.name) must be a JSON object (\(variable.path))")
        }
    }

    /// Where the value of `key` comes from.
    private func source(_ key: String) -> ConfigEnvironment.Source {
        if let origin { return .environment(origin) }
        if let variable = environment?.variable(for: name(key)) { return .environment(variable.name) }
        if values[key] == nil, let variable = environment?.firstVariable(under: name(key)) {
            return .environment(variable.name)  // an object whose keys the variables set one by one
        }
        return values[key].map { $0 == .null ? .defaults : .file } ?? .defaults
    }

    /// The variable that set `key` whole as JSON (or this section's, inside one), marked used.
    private func wholeOrigin(_ key: String) -> String? {
        if let origin { return origin }
        guard let variable = environment?.variable(for: name(key)) else { return nil }
        environment?.markUsed(variable.name)
        return variable.name
    }

    /// Records the value in effect for `key`, for `authd check`.
    package func note(_ key: String, _ value: JSONValue) {
        environment?.record(name(key), value, from: source(key))
    }

    /// The value the file sets at `dotted` (`argon2.ops_limit`), without marking it read: what
    /// `authd check` shows beside a declared setting.
    package func valueInFile(_ dotted: String) -> JSONValue? {
        var current: JSONValue? = .object(values)
        for part in dotted.split(separator: ".") {
            guard case .object(let o) = current else { return nil }
            current = o[String(part)]
        }
        return current
    }

    /// Whether the section has no keys at all, in the file or the environment.
    public var isEmpty: Bool { values.isEmpty && !(origin == nil && environment?.setsKeys(under: path) == true) }

    /// Whether the key is set, in the file or the environment.
    public func contains(_ key: String) -> Bool {
        if values[key] != nil { return true }
        guard origin == nil, let environment else { return false }
        return environment.variable(for: name(key)) != nil || environment.setsKeys(under: name(key))
    }

    /// Reads a string.
    public mutating func string(_ key: String, default defaultValue: String) throws -> String {
        try optionalString(key) ?? defaultValue
    }

    /// Reads a string that may be absent.
    public mutating func optionalString(_ key: String) throws -> String? {
        guard let v = try value(key, as: .string) else { return nil }
        guard case .string(let s) = v else { throw ConfigError("\(label(key)) must be a string, not \(v.typeName)") }
        note(key, v)
        return s
    }

    /// Reads a boolean.
    public mutating func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let v = try value(key, as: .bool) else {
            note(key, .bool(defaultValue))
            return defaultValue
        }
        guard case .bool(let b) = v else { throw ConfigError("\(label(key)) must be true or false, not \(v.typeName)") }
        note(key, v)
        return b
    }

    /// Reads a whole number within `range`.
    public mutating func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let v = try value(key, as: .number) else {
            note(key, .number(Double(defaultValue)))
            return defaultValue
        }
        guard case .number(let n) = v, n.rounded() == n, let i = Int(exactly: n) else {
            throw ConfigError("\(label(key)) must be a whole number, not \(v.typeName == "a number" ? "a fraction" : v.typeName)")
        }
        guard range.contains(i) else {
            throw ConfigError("\(label(key)) must be between \(range.lowerBound) and \(range.upperBound), not \(i)")
        }
        note(key, v)
        return i
    }

    /// Reads a duration in whole seconds, at least 1.
    public mutating func seconds(_ key: String, default defaultValue: Int, max: Int = 10 * 365 * 86_400) throws -> Int {
        try int(key, default: defaultValue, in: 1...max)
    }

    /// Reads an array of strings.
    public mutating func strings(_ key: String, default defaultValue: [String]) throws -> [String] {
        guard let v = try value(key, as: .array) else {
            note(key, .array(defaultValue.map(JSONValue.string)))
            return defaultValue
        }
        guard case .array(let items) = v else { throw ConfigError("\(label(key)) must be an array of strings, not \(v.typeName)") }
        let strings = try items.map {
            guard case .string(let s) = $0 else { throw ConfigError("\(label(key)) must contain only strings") }
            return s
        }
        note(key, v)
        return strings
    }

    /// Reads a nested object as a section (empty when absent).
    public mutating func section(_ key: String) throws -> ConfigSection {
        var child = ConfigSection(path: name(key), values: [:])
        if let v = try value(key, as: .object) {
            guard case .object(let o) = v else { throw ConfigError("\(label(key)) must be an object, not \(v.typeName)") }
            child = ConfigSection(path: name(key), values: o)
        }
        (child.declared, child.declarer, child.environment) = (declared, declarer, environment)
        child.origin = wholeOrigin(key)
        return child
    }

    /// Reads a map of named objects (`oidc.providers`: a name → an object) as a section per entry,
    /// in name order, each at `key.NAME` (empty when absent); an entry may come from the file or
    /// from variables alone (`AUTHD_OIDC__PROVIDERS__GOOGLE__CLIENT_ID`).
    public mutating func entries(_ key: String) throws -> [(name: String, section: ConfigSection)] {
        var map = try section(key)
        var names = Set(map.values.keys)
        if map.origin == nil, let environment { names.formUnion(environment.childNames(under: map.path)) }
        return try names.sorted().map { name in (name, try map.section(name)) }
    }

    /// Reads an array of objects, each as a section named `key[i]` (empty when absent).
    public mutating func sections(_ key: String) throws -> [ConfigSection] {
        guard let v = try value(key, as: .array) else { return [] }
        guard case .array(let items) = v else { throw ConfigError("\(label(key)) must be an array of objects, not \(v.typeName)") }
        let origin = wholeOrigin(key)
        return try items.enumerated().map { i, item in
            guard case .object(let o) = item else { throw ConfigError("\(label(key))[\(i)] must be an object, not \(item.typeName)") }
            var child = ConfigSection(path: "\(name(key))[\(i)]", values: o)
            (child.declared, child.declarer, child.environment, child.origin) = (declared, declarer, environment, origin)
            return child
        }
    }

    /// Marks a key as handled without reading it (a section another component reads).
    public mutating func skip(_ key: String) {
        read.insert(key)
        Self.recorder?.paths.withLock { _ = $0.insert(name(key)) }
    }

    /// Fails on the first key (alphabetically) that was never read.
    public func rejectUnknownKeys() throws {
        if let unknown = values.keys.filter({ !read.contains($0) }).sorted().first {
            throw ConfigError("unknown configuration key \(label(unknown))")
        }
    }
}
