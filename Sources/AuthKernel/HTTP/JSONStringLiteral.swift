/// The text of a JSON string (RFC 8259 §7) as a parser reads it: escapes resolved, so `"x\u0041"`
/// and `"xA"` are one key. Whatever looks at a body's keys before `JSONDecoder` reads them the same
/// way, or a client could spell a key so that one reader sees it and the other does not (contract §12).
package enum JSONStringLiteral {
    /// The text of the string whose contents (the bytes between its quotes) are `raw`; nil when
    /// they are not valid JSON: a raw control character, an unknown escape, a `\u` escape that is
    /// not four hex digits or names half of a surrogate pair, or bytes that are not UTF-8.
    package static func decode(_ raw: some Collection<UInt8>) -> String? {
        let b = Array(raw)
        guard b.contains(UInt8(ascii: "\\")) || b.contains(where: { $0 < 0x20 }) else { return String(validating: b, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            let c = b[i]
            guard c >= 0x20 else { return nil }
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                i += 1
                continue
            }
            guard i + 1 < b.count else { return nil }
            let simple: UInt8? =
                switch b[i + 1] {
                case UInt8(ascii: "\""): 0x22
                case UInt8(ascii: "\\"): 0x5C
                case UInt8(ascii: "/"): 0x2F
                case UInt8(ascii: "b"): 0x08
                case UInt8(ascii: "f"): 0x0C
                case UInt8(ascii: "n"): 0x0A
                case UInt8(ascii: "r"): 0x0D
                case UInt8(ascii: "t"): 0x09
                default: nil
                }
            if let simple {
                out.append(simple)
                i += 2
                continue
            }
            guard b[i + 1] == UInt8(ascii: "u"), let unit = hex4(b, at: i + 2) else { return nil }
            i += 6
            var value = unit
            if (0xD800...0xDBFF).contains(unit) {
                guard i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u"), let low = hex4(b, at: i + 2),
                    (0xDC00...0xDFFF).contains(low)
                else { return nil }
                value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            }
            guard let scalar = Unicode.Scalar(value) else { return nil }
            out.append(contentsOf: UTF8.encode(scalar)!)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// The four hex digits at `i` as a number, or nil.
    private static func hex4(_ b: [UInt8], at i: Int) -> UInt32? {
        guard i + 4 <= b.count else { return nil }
        var value: UInt32 = 0
        for c in b[i..<(i + 4)] {
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
