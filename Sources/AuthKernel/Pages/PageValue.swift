/// A value a page template shows: text (escaped when rendered), a flag for `{{#name}}…{{/name}}`,
/// or a list of rows.
public enum PageValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    /// Text.
    case text(String)
    /// A flag: a section shown when true.
    case flag(Bool)
    /// Rows, each shown by the section named after the list.
    case list([[String: PageValue]])

    /// Text from a literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// A flag from a literal.
    public init(booleanLiteral value: Bool) { self = .flag(value) }

    /// Appends the value to a rendering cache's key: every text length-prefixed, so two different
    /// values never read alike, and written without reflection (`"\(value)"` describes an enum by
    /// reflection, which cost `/login` a sixth of its time).
    package func appendKey(to key: inout String) {
        switch self {
        case .text(let s):
            key += "t\(s.utf8.count):"
            key += s
        case .flag(let b):
            key += b ? "T" : "F"
        case .list(let rows):
            key += "l\(rows.count)["
            for row in rows { Self.appendKey(row, to: &key) }
            key += "]"
        }
    }

    /// Appends named values to a rendering cache's key, in name order.
    package static func appendKey(_ values: [String: PageValue], to key: inout String) {
        key += "{"
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            key += "\(name.utf8.count):"
            key += name
            value.appendKey(to: &key)
        }
        key += "}"
    }

    /// What Mustache reads.
    package var mustache: Any {
        switch self {
        case .text(let s): s
        case .flag(let b): b
        case .list(let rows): rows.map { $0.mapValues(\.mustache) }
        }
    }
}
