import AuthKernel
import Crypto
import Foundation

/// RFC 6238 time-based one-time passwords as every authenticator app makes them: HMAC-SHA-1,
/// 6 digits, 30-second steps.
enum TOTPCode {
    static let digits = 6
    static let period = 30.0
    /// Steps either side of now that are accepted: a phone's clock a little off, a code typed just
    /// as it changed.
    static let drift: Int64 = 1

    /// The step `date` falls in.
    static func step(at date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / period).rounded(.down)) }

    /// The code of `step` (RFC 4226 dynamic truncation), zero-padded.
    static func code(secret: [UInt8], step: Int64) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let value = binary % 1_000_000
        let text = String(value)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The step within ±``drift`` of `now` whose code is `code`, later than `after` (a step used
    /// once is never accepted again), or nil. Every candidate is compared, in constant time.
    static func matchingStep(_ code: String, secret: [UInt8], now: Date, after lastUsed: Int64?) -> Int64? {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let current = step(at: now)
        var found: Int64?
        for candidate in (current - drift)...(current + drift) {
            let matches = ConstantTime.equals(Array(Self.code(secret: secret, step: candidate).utf8), Array(code.utf8))
            if matches, candidate > (lastUsed ?? Int64.min), found == nil { found = candidate }
        }
        return found
    }
}

/// RFC 4648 base32 without padding: how `otpauth://` URIs carry the secret.
enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8](), buffer: UInt32 = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
