package import AuthStorage
import Foundation
import Synchronization

/// The process environment as a layer of configuration over the file (contract §14), and the
/// record of where each key's value came from, for `authd check`.
///
/// `AUTHD_<SECTION>__<KEY>` sets `section.key` (upper case, `__` between levels); `AUTHD_<KEY>` a
/// top-level key. A value takes the type the key is read as: strings verbatim, numbers and booleans
/// parsed, lists and objects as JSON. `…_FILE` reads the value from a file less one trailing
/// newline, unless the key itself ends in `_file` (`storage.postgres.url_file`), which wins.
/// Variables that name no key read are reported by ``unused()`` rather than refused, since
/// orchestrators set `AUTHD_*` variables of their own (Kubernetes' `AUTHD_SERVICE_HOST`).
package final class ConfigEnvironment: Sendable {
    /// Where a value in effect came from.
    package enum Source: Sendable, Equatable, CustomStringConvertible {
        /// Built in.
        case defaults
        /// The configuration file.
        case file
        /// The named variable.
        case environment(String)

        package var description: String {
            switch self {
            case .defaults: "default"
            case .file: "file"
            case .environment(let name): name
            }
        }
    }

    /// One variable, under the dotted key path it sets.
    package struct Variable: Sendable, Equatable {
        /// The variable's name, `AUTHD_TOKENS__ACCESS_TTL`.
        package var name: String
        /// The key it sets, `tokens.access_ttl`.
        package var path: String
        /// Its text (a `_FILE` variable's file's).
        package var text: String
    }

    /// Variables authd reads for themselves rather than as configuration keys (contract §1, §14).
    package static let ownVariables: Set<String> = [
        "AUTHD_DATA", "AUTHD_CONFIG", "AUTHD_HOST", "AUTHD_PORT", "AUTHD_LOG_LEVEL", "AUTHD_KEY_ENCRYPTION_KEY",
    ]

    /// By the dotted path they set.
    private let variables: [String: Variable]
    /// Variables that were not configuration keys at all (a malformed name).
    private let malformed: [String]

    private struct Trace {
        var used: Set<String> = []
        var values: [String: (value: JSONValue, source: Source)] = [:]
    }
    private let trace = Mutex(Trace())

    /// No variables: only the record of what the file and the defaults set.
    package convenience init() { try! self.init([:], fileKeys: []) }

    /// Reads the `AUTHD_*` variables of `environment`.
    /// - Parameter fileKeys: dotted paths of keys that themselves end in `_file`, which a
    ///   `…_FILE` variable sets verbatim instead of reading a file for the key without the suffix.
    /// - Throws: ``ConfigError`` naming the variable: a `_FILE` that cannot be read, two variables
    ///   for one key, or a section set both whole and key by key.
    package init(_ environment: [String: String], fileKeys: Set<String>) throws(ConfigError) {
        var variables: [String: Variable] = [:]
        var malformed: [String] = []
        for (name, text) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix("AUTHD_") && !Self.ownVariables.contains(name) {
            let levels = name.dropFirst(6).split(separator: "__", omittingEmptySubsequences: false).map { $0.lowercased() }
            guard levels.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { Self.isKeyByte($0) } }) else {
                malformed.append(name)
                continue
            }
            var path = levels.joined(separator: ".")
            var value = text
            if path.hasSuffix("_file"), !fileKeys.contains(path) {
                path = String(path.dropLast(5))
                guard let contents = FileManager.default.contents(atPath: text), let read = String(data: contents, encoding: .utf8) else {
                    throw ConfigError("\(name): cannot read the file \(text)")
                }
                value = read.hasSuffix("\r\n") ? String(read.dropLast(2)) : read.hasSuffix("\n") ? String(read.dropLast()) : read
            }
            if let other = variables[path] {
                throw ConfigError("\(other.name) and \(name) both set \(path): set one")
            }
            variables[path] = Variable(name: name, path: path, text: value)
        }
        for (path, variable) in variables {
            var parent = path
            while let dot = parent.lastIndex(of: ".") {
                parent = String(parent[..<dot])
                if let whole = variables[parent] {
                    throw ConfigError("\(whole.name) sets \(parent) and \(variable.name) sets \(path) inside it: set the object or its keys, not both")
                }
            }
        }
        self.variables = variables
        self.malformed = malformed
    }

    /// `a`–`z`, `0`–`9` and `_`, as a lower-cased level of a variable's name.
    private static func isKeyByte(_ b: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || b == UInt8(ascii: "_")
    }

    /// The variable that sets `path`, if any.
    package func variable(for path: String) -> Variable? { variables[path] }

    /// The variable whose key a message names (the longest such key), for an error raised after
    /// the value was read.
    package func variable(mentionedIn message: String) -> Variable? {
        variables.values.filter { message.contains($0.path) }.max { $0.path.count < $1.path.count }
    }

    /// The first variable, by key, that sets `path` or a key inside it.
    package func firstVariable(under path: String) -> Variable? {
        variables.values.filter { $0.path == path || $0.path.hasPrefix(path + ".") }.min { $0.path < $1.path }
    }

    /// The names of the keys directly inside `path` that variables set (`oidc.providers.google.client_id`
    /// names `google` under `oidc.providers`).
    package func childNames(under path: String) -> Set<String> {
        let prefix = path + "."
        return Set(variables.keys.compactMap { key in
            guard key.hasPrefix(prefix) else { return nil }
            return key.dropFirst(prefix.count).split(separator: ".").first.map(String.init)
        })
    }

    /// Whether some variable sets a key inside `path`.
    package func setsKeys(under path: String) -> Bool {
        let prefix = path.isEmpty ? "" : path + "."
        return variables.keys.contains { $0.hasPrefix(prefix) }
    }

    /// Notes the value in effect at `path` and where it came from; a variable's is then used.
    package func record(_ path: String, _ value: JSONValue, from source: Source) {
        trace.withLock {
            $0.values[path] = (value, source)
            if case .environment(let name) = source { $0.used.insert(name) }
        }
    }

    /// Marks a variable as read (a section set whole, whose keys are recorded one by one).
    package func markUsed(_ name: String) { trace.withLock { _ = $0.used.insert(name) } }

    /// Every value read so far, by path, with its source.
    package func effective() -> [(path: String, value: JSONValue, source: Source)] {
        trace.withLock { t in t.values.map { ($0.key, $0.value.value, $0.value.source) } }.sorted { $0.path < $1.path }
    }

    /// The variable that set the value at `path`, if one did.
    package func source(of path: String) -> Source? { trace.withLock { $0.values[path]?.source } }

    /// One warning per `AUTHD_*` variable no key read: a typo, a disabled provider's key, or a
    /// variable of the platform's own.
    package func unused() -> [String] {
        let used = trace.withLock { $0.used }
        let names = variables.values.map(\.name).filter { !used.contains($0) } + malformed
        return names.sorted().map { "\($0) names no configuration key in use; ignored" }
    }

    /// `root` with every value a variable set in place, so a reload compares what is in effect.
    package func applied(to root: [String: JSONValue]) -> [String: JSONValue] {
        var result = JSONValue.object(root)
        for (path, value, source) in effective() {
            guard case .environment = source else { continue }
            Self.set(&result, path.split(separator: ".").map(String.init)[...], value)
        }
        guard case .object(let o) = result else { return root }
        return o
    }

    private static func set(_ target: inout JSONValue, _ path: ArraySlice<String>, _ value: JSONValue) {
        guard let first = path.first else { target = value; return }
        guard !first.contains("[") else { return }
        var object: [String: JSONValue] = [:]
        if case .object(let o) = target { object = o }
        var child = object[first] ?? .null
        set(&child, path.dropFirst(), value)
        object[first] = child
        target = .object(object)
    }
}
