import Foundation

/// A form posted to a provider's page (`application/x-www-form-urlencoded`), its fields by the
/// API's JSON names (`email`, `code`, `password`).
public struct PageForm: Sendable, Equatable {
    private let fields: [String: String]

    /// The longest body read; a longer one is refused before it is parsed.
    public static let maxBytes = 16 * 1024

    /// A form from its fields (tests).
    public init(_ fields: [String: String]) { self.fields = fields }

    /// Parses a urlencoded body; a field given twice keeps its first value.
    public init(urlencoded body: String) {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String { String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            let name = decode(parts[0])
            if fields[name] == nil { fields[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        self.fields = fields
    }

    /// The field's value, nil when absent.
    public subscript(_ name: String) -> String? { fields[name] }
}
