public import Foundation

extension UUID {
    /// The lower-case form authd uses on the wire and in logs (`sub`, `sid`, `user.id`).
    public var lowercased: String { text(digits: Self.lowerDigits) }

    /// The upper-case form `uuidString` gives and `JSONEncoder` writes (the store's records).
    /// Foundation's `uuidString` formats through `snprintf`, which showed in the store profile.
    var uppercased: String { text(digits: Self.upperDigits) }

    /// Parses the 36-character form in either case, as `UUID(uuidString:)` does, without its
    /// `sscanf` (a visible share of start-up at a million users).
    init?(text: String) {
        var text = text
        let parsed: uuid_t?? = text.withUTF8 { utf8 -> uuid_t? in
            guard utf8.count == 36 else { return nil }
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let ok = withUnsafeMutableBytes(of: &raw) { out -> Bool in
                var i = 0
                for n in 0..<16 {
                    if i == 8 || i == 13 || i == 18 || i == 23 {
                        guard utf8[i] == UInt8(ascii: "-") else { return false }
                        i += 1
                    }
                    guard let hi = Self.nibble(utf8[i]), let lo = Self.nibble(utf8[i + 1]) else { return false }
                    out[n] = hi << 4 | lo
                    i += 2
                }
                return true
            }
            return ok ? raw : nil
        }
        guard let raw = parsed ?? nil else { return nil }
        self.init(uuid: raw)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static let lowerDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let upperDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private func text(digits: [UInt8]) -> String {
        withUnsafeBytes(of: uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var j = 0
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[j] = UInt8(ascii: "-")
                        j += 1
                    }
                    out[j] = digits[Int(raw[i] >> 4)]
                    out[j + 1] = digits[Int(raw[i] & 0x0F)]
                    j += 2
                }
                return j
            }
        }
    }
}
