import AuthStorage
internal import CSodium

/// Authenticated symmetric encryption (libsodium `crypto_secretbox`: XSalsa20-Poly1305) for secrets
/// authd must keep but never store in plain text, e.g. a third party's refresh token.
public struct SecretBox: Sendable {
    private let key: [UInt8]

    /// Key length in bytes.
    public static let keyBytes = Int(crypto_secretbox_KEYBYTES)

    /// Creates a box with a 32-byte key.
    /// - Throws: ``CryptoError/invalidKey`` for another length.
    public init(key: [UInt8]) throws {
        guard key.count == Self.keyBytes else { throw CryptoError.invalidKey }
        self.key = key
    }

    /// Encrypts `plaintext` with a fresh random nonce; returns nonce and ciphertext, base64url, as `nonce.ciphertext`.
    public func seal(_ plaintext: String) -> String {
        Sodium.ensureInitialized()
        let message = Array(plaintext.utf8)
        let nonce = SecureRandom.bytes(Int(crypto_secretbox_NONCEBYTES))
        var out = [UInt8](repeating: 0, count: message.count + Int(crypto_secretbox_MACBYTES))
        _ = crypto_secretbox_easy(&out, message, UInt64(message.count), nonce, key)
        return Base64URL.encode(nonce) + "." + Base64URL.encode(out)
    }

    /// Decrypts what ``seal(_:)`` made; nil when it was altered or sealed with another key.
    public func open(_ sealed: String) -> String? {
        Sodium.ensureInitialized()
        let parts = sealed.split(separator: ".")
        guard parts.count == 2, let nonce = Base64URL.decode(parts[0]), let box = Base64URL.decode(parts[1]),
            nonce.count == Int(crypto_secretbox_NONCEBYTES), box.count >= Int(crypto_secretbox_MACBYTES)
        else { return nil }
        var out = [UInt8](repeating: 0, count: box.count - Int(crypto_secretbox_MACBYTES))
        guard crypto_secretbox_open_easy(&out, box, UInt64(box.count), nonce, key) == 0 else { return nil }
        return String(decoding: out, as: UTF8.self)
    }
}
