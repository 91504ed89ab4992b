public import Foundation

extension UUID {
    /// The lower-case form authd uses on the wire and in logs (`sub`, `sid`, `user.id`).
    public var lowercased: String { text(digits: Hex.digits) }

    /// The upper-case form `uuidString` gives and `JSONEncoder` writes (the store's records).
    /// Foundation's `uuidString` formats through `snprintf`, which showed in the store profile.
    package var uppercased: String { text(digits: Hex.upperDigits) }

    /// Parses the 36-character form in either case, as `UUID(uuidString:)` does, without its
    /// `sscanf` (a visible share of start-up at a million users).
    package init?(text: String) {
        var text = text
        let parsed = text.withUTF8 { utf8 -> uuid_t? in
            guard utf8.count == 36 else { return nil }
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let ok = withUnsafeMutableBytes(of: &raw) { out -> Bool in
                var i = 0
                for n in 0..<16 {
                    if i == 8 || i == 13 || i == 18 || i == 23 {
                        guard utf8[i] == UInt8(ascii: "-") else { return false }
                        i += 1
                    }
                    guard let hi = Hex.nibble(utf8[i]), let lo = Hex.nibble(utf8[i + 1]) else { return false }
                    out[n] = hi << 4 | lo
                    i += 2
                }
                return true
            }
            return ok ? raw : nil
        }
        guard let parsed else { return nil }
        self.init(uuid: parsed)
    }

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
