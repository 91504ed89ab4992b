internal import CSodium
public import Foundation

/// Cryptographically secure randomness from libsodium (`randombytes_*`).
public enum SecureRandom {
    /// Returns `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        if count > 0 { out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) } }
        return out
    }

    /// Returns a uniformly distributed integer in `0..<upperBound`, without modulo bias.
    public static func uniform(_ upperBound: UInt32) -> UInt32 {
        Sodium.ensureInitialized()
        return randombytes_uniform(upperBound)
    }

    /// Returns a string of `count` uniformly random decimal digits, e.g. a one-time code.
    public static func digits(_ count: Int) -> String {
        String((0..<count).map { _ in Character(String(uniform(10))) })
    }

    /// Returns a random (version 4) UUID. Foundation's `UUID()` opens and reads `/dev/urandom` on
    /// every call on Linux, which showed in the store profile; libsodium keeps its source open.
    public static func uuid() -> UUID {
        Sodium.ensureInitialized()
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { randombytes_buf($0.baseAddress!, 16) }
        raw.6 = (raw.6 & 0x0F) | 0x40  // version 4
        raw.8 = (raw.8 & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: raw)
    }
}
