import Foundation

/// Standard base64 (with padding) of bytes that arrive in pieces: each piece's output is what one
/// base64 of everything so far would have added, so the pieces' outputs joined equal the base64
/// of the pieces joined. Up to two bytes wait for the next piece (base64 codes three at a time).
struct Base64Stream {
    private var carry: [UInt8] = []

    /// The base64 of `bytes` after what came before, but for up to two bytes kept for later.
    mutating func encode(_ bytes: [UInt8]) -> [UInt8] {
        let all = carry + bytes
        let whole = all.count - all.count % 3
        carry = Array(all[whole...])
        return Array(Data(all[..<whole]).base64EncodedData())
    }

    /// The bytes still waiting, padded: call once, after the last piece.
    mutating func finish() -> [UInt8] {
        defer { carry = [] }
        return Array(Data(carry).base64EncodedData())
    }
}
