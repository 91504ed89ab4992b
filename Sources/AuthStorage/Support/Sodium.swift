internal import CSodium

/// Initializes libsodium exactly once, before any wrapper touches it.
///
/// `sodium_init` is thread-safe and idempotent, but calling it once through a lazy global
/// keeps the hot paths free of the call.
package enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    /// Makes sure libsodium is initialized; traps if it cannot be (no usable entropy source).
    @inline(__always)
    package static func ensureInitialized() {
        precondition(initialized, "libsodium could not be initialized")
    }
}
