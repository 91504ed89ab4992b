internal import CSodium

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
}
