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

    /// What Mustache reads.
    package var mustache: Any {
        switch self {
        case .text(let s): s
        case .flag(let b): b
        case .list(let rows): rows.map { $0.mapValues(\.mustache) }
        }
    }
}
