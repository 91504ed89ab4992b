import AuthStorage
internal import CSodium

/// SHA-256 and HMAC-SHA-256 from libsodium.
public enum SHA256 {
    /// Length of a digest in bytes.
    public static let byteCount = 32

    /// Returns the SHA-256 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        Sodium.ensureInitialized()
        let input = Array(bytes)
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_hash_sha256(&out, input, UInt64(input.count))
        return out
    }

    /// Returns the SHA-256 digest of the UTF-8 bytes of `string`.
    public static func hash(_ string: String) -> [UInt8] {
        hash(Array(string.utf8))
    }

    /// Returns HMAC-SHA-256 of `message` under `key` (any key length).
    public static func hmac(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        Sodium.ensureInitialized()
        let input = Array(message)
        var state = crypto_auth_hmacsha256_state()
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_auth_hmacsha256_init(&state, key, key.count)
        _ = crypto_auth_hmacsha256_update(&state, input, UInt64(input.count))
        _ = crypto_auth_hmacsha256_final(&state, &out)
        return out
    }
}
