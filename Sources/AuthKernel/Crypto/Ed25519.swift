import AuthStorage
internal import CSodium

/// Ed25519 signatures (RFC 8032) from libsodium.
package struct Ed25519KeyPair: Sendable {
    /// The 32-byte seed the key pair is derived from; this is the secret to keep.
    package let seed: [UInt8]
    /// The 32-byte public key.
    package let publicKey: [UInt8]
    private let secretKey: [UInt8]

    /// Creates a fresh random key pair.
    package init() {
        self.init(seedUnchecked: SecureRandom.bytes(Int(crypto_sign_SEEDBYTES)))
    }

    /// Derives the key pair from a 32-byte seed.
    /// - Throws: ``CryptoError/invalidKey`` when the seed is not 32 bytes.
    package init(seed: [UInt8]) throws {
        guard seed.count == Int(crypto_sign_SEEDBYTES) else { throw CryptoError.invalidKey }
        self.init(seedUnchecked: seed)
    }

    private init(seedUnchecked seed: [UInt8]) {
        Sodium.ensureInitialized()
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var sk = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        _ = crypto_sign_seed_keypair(&pk, &sk, seed)
        self.seed = seed
        self.publicKey = pk
        self.secretKey = sk
    }

    /// Returns the 64-byte detached signature of `message`.
    package func sign(_ message: some Collection<UInt8>) -> [UInt8] {
        let input = Array(message)
        var sig = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        _ = crypto_sign_detached(&sig, nil, input, UInt64(input.count), secretKey)
        return sig
    }
}

/// Verification of Ed25519 signatures (libsodium), for providers that check signatures made
/// elsewhere (a passkey's EdDSA assertions).
public enum Ed25519 {
    /// Returns whether `signature` (64 bytes) is a valid signature of `message` by `publicKey` (32 bytes).
    public static func verify(signature: [UInt8], message: some Collection<UInt8>, publicKey: [UInt8]) -> Bool {
        Sodium.ensureInitialized()
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else {
            return false
        }
        let input = Array(message)
        return crypto_sign_verify_detached(signature, input, UInt64(input.count), publicKey) == 0
    }
}
