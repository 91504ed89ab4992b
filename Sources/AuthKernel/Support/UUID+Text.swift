public import Foundation

extension UUID {
    /// The lower-case form authd uses on the wire and in logs (`sub`, `sid`, `user.id`).
    public var lowercased: String { text(digits: Self.lowerDigits) }

    /// The upper-case form `uuidString` gives and `JSONEncoder` writes (the store's records).
    /// Foundation's `uuidString` formats through `snprintf`, which showed in the store profile.
    var uppercased: String { text(digits: Self.upperDigits) }

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
