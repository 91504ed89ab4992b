import AuthStorage
internal import CSodium

/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Returns whether `a` and `b` are equal, in time that depends only on their length.
    ///
    /// Inputs of different lengths compare unequal at once; callers compare fixed-length digests,
    /// so the length is never the secret.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        Sodium.ensureInitialized()
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return sodium_memcmp(a, b, a.count) == 0
    }
}
