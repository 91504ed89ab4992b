public import AuthStorage
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

    /// Creates a section over `values` at `path` (empty for the top level).
    public init(path: String, values: [String: JSONValue]) {
        self.path = path
        self.values = values
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

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

    private mutating func value(_ key: String) throws(ConfigError) -> JSONValue? {
        try checkDeclared(key)
        read.insert(key)
        Self.recorder?.paths.withLock { _ = $0.insert(name(key)) }
        if case .null = values[key] { return nil }
        return values[key]
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

    /// Whether the section has no keys at all.
    public var isEmpty: Bool { values.isEmpty }

    /// Whether the key is present in the file.
    public func contains(_ key: String) -> Bool { values[key] != nil }

    /// Reads a string.
    public mutating func string(_ key: String, default defaultValue: String) throws -> String {
        try optionalString(key) ?? defaultValue
    }

    /// Reads a string that may be absent.
    public mutating func optionalString(_ key: String) throws -> String? {
        guard let v = try value(key) else { return nil }
        guard case .string(let s) = v else { throw ConfigError("\(name(key)) must be a string, not \(v.typeName)") }
        return s
    }

    /// Reads a boolean.
    public mutating func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let v = try value(key) else { return defaultValue }
        guard case .bool(let b) = v else { throw ConfigError("\(name(key)) must be true or false, not \(v.typeName)") }
        return b
    }

    /// Reads a whole number within `range`.
    public mutating func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let v = try value(key) else { return defaultValue }
        guard case .number(let n) = v, n.rounded() == n, let i = Int(exactly: n) else {
            throw ConfigError("\(name(key)) must be a whole number, not \(v.typeName)")
        }
        guard range.contains(i) else {
            throw ConfigError("\(name(key)) must be between \(range.lowerBound) and \(range.upperBound), not \(i)")
        }
        return i
    }

    /// Reads a duration in whole seconds, at least 1.
    public mutating func seconds(_ key: String, default defaultValue: Int, max: Int = 10 * 365 * 86_400) throws -> Int {
        try int(key, default: defaultValue, in: 1...max)
    }

    /// Reads an array of strings.
    public mutating func strings(_ key: String, default defaultValue: [String]) throws -> [String] {
        guard let v = try value(key) else { return defaultValue }
        guard case .array(let items) = v else { throw ConfigError("\(name(key)) must be an array of strings, not \(v.typeName)") }
        return try items.map {
            guard case .string(let s) = $0 else { throw ConfigError("\(name(key)) must contain only strings") }
            return s
        }
    }

    /// Reads a nested object as a section (empty when absent).
    public mutating func section(_ key: String) throws -> ConfigSection {
        var child = ConfigSection(path: name(key), values: [:])
        if let v = try value(key) {
            guard case .object(let o) = v else { throw ConfigError("\(name(key)) must be an object, not \(v.typeName)") }
            child = ConfigSection(path: name(key), values: o)
        }
        (child.declared, child.declarer) = (declared, declarer)
        return child
    }

    /// Reads an array of objects, each as a section named `key[i]` (empty when absent).
    public mutating func sections(_ key: String) throws -> [ConfigSection] {
        guard let v = try value(key) else { return [] }
        guard case .array(let items) = v else { throw ConfigError("\(name(key)) must be an array of objects, not \(v.typeName)") }
        return try items.enumerated().map { i, item in
            guard case .object(let o) = item else { throw ConfigError("\(name(key))[\(i)] must be an object, not \(item.typeName)") }
            var child = ConfigSection(path: "\(name(key))[\(i)]", values: o)
            (child.declared, child.declarer) = (declared, declarer)
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
            throw ConfigError("unknown configuration key \(name(unknown))")
        }
    }
}
