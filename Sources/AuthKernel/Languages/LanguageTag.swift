/// A BCP 47 language tag (`de`, `pt-BR`, `zh-Hant-TW`), well-formed and in its canonical case: the
/// language lower case, a script title case, a region upper case. What a user's `locale` holds and
/// what a catalog in `DATA/locales/` is named.
public struct LanguageTag: Sendable, Hashable, CustomStringConvertible {
    /// The tag, canonical case.
    public let description: String

    /// The longest tag taken: BCP 47 asks implementations to take 35 characters.
    public static let maxLength = 35

    /// Reads `text` as a tag, or nil where it is not one (`x`, `en_US`, `de--DE`, over 35 characters).
    public init?(_ text: some StringProtocol) {
        guard !text.isEmpty, text.utf8.count <= Self.maxLength else { return nil }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...8).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        var out = [first.lowercased()]
        for (i, part) in parts.dropFirst().enumerated() {
            guard (1...8).contains(part.count), part.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
            if i < 2, part.count == 4, part.allSatisfy(\.isLetter), out.count == 1 {
                out.append(part.prefix(1).uppercased() + part.dropFirst().lowercased())
            } else if part.count == 2, part.allSatisfy(\.isLetter), !out.contains(where: { $0.count == 1 }) {
                out.append(part.uppercased())
            } else {
                out.append(part.lowercased())
            }
        }
        description = out.joined(separator: "-")
    }

    /// The tag and each shorter one made by dropping its last part (`de-CH-1996`, `de-CH`, `de`):
    /// RFC 4647's lookup.
    public var fallbacks: [String] {
        var parts = description.split(separator: "-").map(String.init)
        var out: [String] = []
        while !parts.isEmpty {
            out.append(parts.joined(separator: "-"))
            parts.removeLast()
            // A lone one-letter part (`x`, `u`) only introduces what follows it.
            if parts.last?.count == 1 { parts.removeLast() }
        }
        return out
    }

    /// The ranges of an `Accept-Language` header, best first (by `q`, then by order), without `*`
    /// and `q=0`. Bounded: a header over 1 KiB or past its 16th range is read no further.
    public static func accepted(_ header: String?) -> [LanguageTag] {
        guard let header else { return [] }
        var ranked: [(tag: LanguageTag, q: Double, order: Int)] = []
        for (order, item) in header.utf8.prefix(1024).split(separator: UInt8(ascii: ",")).prefix(16).enumerated() {
            let fields = String(decoding: item, as: UTF8.self).split(separator: ";")
            guard let range = fields.first?.filter({ !$0.isWhitespace }), let tag = LanguageTag(range) else { continue }
            var q = 1.0
            for field in fields.dropFirst() {
                let pair = field.filter { !$0.isWhitespace }.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].lowercased() == "q" { q = Double(pair[1]).map { min(max($0, 0), 1) } ?? 0 }
            }
            if q > 0 { ranked.append((tag, q, order)) }
        }
        return ranked.sorted { $0.q != $1.q ? $0.q > $1.q : $0.order < $1.order }.map(\.tag)
    }
}
