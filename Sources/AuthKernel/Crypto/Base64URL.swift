/// Base64url without padding (RFC 4648 §5), as JOSE uses it.
///
/// Byte-level on purpose: the Foundation route (base64 then three `replacingOccurrences` through
/// NSString) was a fifth of the server's time on `POST /refresh` (profiled).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// Straight into the string's storage: a token's three encodings are on every refresh.
    private static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let count = (input.count * 4 + 2) / 3
        if count == 0 { return "" }
        return alphabet.withUnsafeBufferPointer { table in
            String(unsafeUninitializedCapacity: count) { out in
                var i = 0, o = 0
                while i + 3 <= input.count {
                    let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                    out[o] = table[Int(n >> 18 & 63)]
                    out[o + 1] = table[Int(n >> 12 & 63)]
                    out[o + 2] = table[Int(n >> 6 & 63)]
                    out[o + 3] = table[Int(n & 63)]
                    i += 3
                    o += 4
                }
                switch input.count - i {
                case 1:
                    let n = UInt32(input[i]) << 16
                    out[o] = table[Int(n >> 18 & 63)]
                    out[o + 1] = table[Int(n >> 12 & 63)]
                case 2:
                    let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                    out[o] = table[Int(n >> 18 & 63)]
                    out[o + 1] = table[Int(n >> 12 & 63)]
                    out[o + 2] = table[Int(n >> 6 & 63)]
                default: break
                }
                return count
            }
        }
    }

    /// Decodes unpadded base64url; nil for anything else (padding, `+`, `/`, whitespace, a dangling character,
    /// or non-zero bits after the last byte).
    public static func decode(_ string: some StringProtocol) -> [UInt8]? {
        let input = Array(string.utf8)
        if input.count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in input {
            let v = values[Int(c)]
            if v == 0xFF { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, so every string has one decoding (no malleable tokens).
        if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }
}
