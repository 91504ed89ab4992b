package import AuthKernel
import Foundation

/// The OpenAPI document a server serves at `GET /openapi.yaml`: the kernel's part
/// (``KernelOpenAPI``) with the fragments of the providers it runs, and only those.
package enum OpenAPIDocument {
    /// The document for `providers`, each provider's fragments once, in order.
    package static func assemble(providers: [any AuthProvider.Type]) throws(OpenAPIFragmentError) -> String {
        var seen = Set<String>()
        let fragments = providers.flatMap { $0.openAPI }.filter { seen.insert($0.name).inserted }
        return try assemble(base: KernelOpenAPI.yaml, fragments: fragments)
    }

    /// Appends each fragment's `tags`, `paths` and `components` entries to the base document's
    /// sections of those names.
    /// - Throws: ``OpenAPIFragmentError`` for a fragment that cannot be merged, or one that refers
    ///   (`$ref: "#/components/KIND/NAME"`) to a component no part defines: a client generated from
    ///   the document would fail on it, so start-up does.
    package static func assemble(base: String, fragments: [OpenAPIFragment]) throws(OpenAPIFragmentError) -> String {
        var document = try Sections(parsing: base, name: "kernel", allowOtherKeys: true)
        for fragment in fragments {
            try document.append(Sections(parsing: fragment.yaml, name: fragment.name, allowOtherKeys: false), from: fragment.name)
        }
        let defined = document.componentNames
        for (name, yaml) in [("kernel", base)] + fragments.map({ ($0.name, $0.yaml) }) {
            if let dangling = references(in: yaml).first(where: { !defined.contains($0) }) {
                throw .init(fragment: name, problem: "refers to #/components/\(dangling), which no part of the document defines")
            }
        }
        return document.text
    }

    /// `KIND/NAME` of every `$ref: "#/components/KIND/NAME"` in `yaml`.
    static func references(in yaml: String) -> [String] {
        var found: [String] = []
        var rest = yaml[...]
        while let range = rest.range(of: "#/components/") {
            rest = rest[range.upperBound...]
            found.append(String(rest.prefix { $0 != "\"" && $0 != "'" && $0 != " " && $0 != "}" && $0 != "," && $0 != "\n" }))
        }
        return found
    }

    /// A YAML document cut at its top-level keys, and `components` at its second-level keys.
    struct Sections {
        /// Top-level keys in order, with their lines (the key's own line first).
        var order: [String] = []
        var lines: [String: [String]] = [:]
        /// `components` children in order, with their lines (the child's key line first).
        var componentOrder: [String] = []
        var components: [String: [String]] = [:]

        static let mergeable: Set<String> = ["tags", "paths", "components"]

        init(parsing text: String, name: String, allowOtherKeys: Bool) throws(OpenAPIFragmentError) {
            var key: String?
            var child: String?
            for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let line = String(raw)
                if line.trimmingTrailingSpaces.isEmpty { if key != nil { append(line, key: key!, child: child) }; continue }
                if let first = line.first, first != " " {
                    guard line.hasSuffix(":") || line.contains(": ") else { throw .init(fragment: name, problem: "cannot read the line `\(line)`") }
                    let k = String(line.prefix { $0 != ":" })
                    guard allowOtherKeys || Self.mergeable.contains(k) else {
                        throw .init(fragment: name, problem: "has the top-level key `\(k)`; a fragment has only tags, paths and components")
                    }
                    guard lines[k] == nil else { throw .init(fragment: name, problem: "has `\(k)` twice") }
                    key = k
                    child = nil
                    order.append(k)
                    lines[k] = [line]
                    continue
                }
                guard let key else { throw .init(fragment: name, problem: "starts with an indented line") }
                if key == "components", line.hasPrefix("  "), !line.hasPrefix("   ") {
                    let c = String(line.dropFirst(2).prefix { $0 != ":" })
                    guard components[c] == nil else { throw .init(fragment: name, problem: "has `components.\(c)` twice") }
                    child = c
                    componentOrder.append(c)
                    components[c] = [line]
                    continue
                }
                append(line, key: key, child: child)
            }
        }

        private mutating func append(_ line: String, key: String, child: String?) {
            if key == "components", let child { components[child, default: []].append(line) } else { lines[key, default: []].append(line) }
        }

        /// Names defined in a section: a path, a tag's name, or a component's name.
        static func names(in lines: some Sequence<String>, prefix: String) -> [String] {
            lines.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).hasPrefix(" ") }.map { line in
                let rest = line.dropFirst(prefix.count)
                if rest.hasPrefix("- ") {
                    guard let range = rest.range(of: "name: ") else { return String(rest) }
                    return String(rest[range.upperBound...].prefix { $0 != "," && $0 != " " && $0 != "}" })
                }
                return String(rest.prefix { $0 != ":" })
            }
        }

        mutating func append(_ other: Sections, from name: String) throws(OpenAPIFragmentError) {
            for key in other.order where key != "components" {
                let added = other.lines[key]!.dropFirst()
                let existing = Set(Self.names(in: lines[key] ?? [], prefix: "  "))
                if let clash = Self.names(in: added, prefix: "  ").first(where: existing.contains) {
                    throw .init(fragment: name, problem: "defines `\(clash)` in \(key), which is already defined")
                }
                if lines[key] == nil { order.append(key); lines[key] = [key + ":"] }
                lines[key] = lines[key]!.trimmingTrailingBlankLines + added.trimmingTrailingBlankLines
            }
            guard other.lines["components"] != nil else { return }
            if lines["components"] == nil { order.append("components"); lines["components"] = ["components:"] }
            for child in other.componentOrder {
                let added = other.components[child]!.dropFirst()
                let existing = Set(Self.names(in: components[child] ?? [], prefix: "    "))
                if let clash = Self.names(in: added, prefix: "    ").first(where: existing.contains) {
                    throw .init(fragment: name, problem: "defines `\(clash)` in components.\(child), which is already defined")
                }
                if components[child] == nil { componentOrder.append(child); components[child] = ["  \(child):"] }
                components[child] = components[child]!.trimmingTrailingBlankLines + added.trimmingTrailingBlankLines
            }
        }

        /// `KIND/NAME` of every component defined (`components:` → two spaces `KIND:` → four spaces `NAME:`).
        var componentNames: Set<String> {
            Set(componentOrder.flatMap { kind in Self.names(in: components[kind]!.dropFirst(), prefix: "    ").map { "\(kind)/\($0)" } })
        }

        var text: String {
            var out: [String] = []
            for key in order {
                out += (lines[key] ?? []).trimmingTrailingBlankLines
                if key == "components" { for child in componentOrder { out += components[child]!.trimmingTrailingBlankLines } }
            }
            return out.joined(separator: "\n") + "\n"
        }
    }
}

/// A provider's OpenAPI fragment that cannot be merged into the served document.
package struct OpenAPIFragmentError: Error, CustomStringConvertible {
    /// The fragment's name.
    package var fragment: String
    /// What is wrong with it.
    package var problem: String
    package var description: String { "the OpenAPI fragment \"\(fragment)\" \(problem)" }
}

extension String {
    fileprivate var trimmingTrailingSpaces: Substring {
        var s = self[...]
        while s.last == " " { s = s.dropLast() }
        return s
    }
}

extension Collection<String> {
    fileprivate var trimmingTrailingBlankLines: [String] {
        var lines = Array(self)
        while let last = lines.last, last.allSatisfy({ $0 == " " }) { lines.removeLast() }
        return lines
    }
}
