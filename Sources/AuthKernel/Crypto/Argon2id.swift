import AuthStorage
internal import CSodium
package import NIOPosix

/// Argon2id password hashing (`crypto_pwhash_str*`), producing standard PHC strings.
///
/// Hashing is deliberately slow and memory-hungry, so the `async` variants run it on
/// NIO's blocking thread pool: the event loops keep serving other requests meanwhile.
public struct Argon2id: Sendable, Equatable {
    /// Number of passes (`t`).
    package var opsLimit: Int
    /// Memory in bytes (`m`).
    package var memLimit: Int

    /// OWASP's minimum for Argon2id: m = 19 MiB, t = 2, p = 1.
    package static let owaspMinimum = Argon2id(opsLimit: 2, memLimit: 19 * 1024 * 1024)

    /// Creates parameters; libsodium always uses one lane (p = 1).
    public init(opsLimit: Int, memLimit: Int) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// Hashes `password` with a fresh random salt, returning the PHC string (`$argon2id$v=19$m=…,t=…,p=1$…`).
    public func hash(_ password: String) throws -> String {
        Sodium.ensureInitialized()
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let length = UInt64(password.utf8.count)
        let rc = password.withCString {
            crypto_pwhash_str_alg(&out, $0, length, UInt64(opsLimit), memLimit, crypto_pwhash_ALG_ARGON2ID13)
        }
        guard rc == 0 else { throw CryptoError.outOfMemory }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Returns whether `password` matches the PHC string `hash`. Comparison is constant-time inside libsodium.
    public static func verify(_ password: String, hash: String) -> Bool {
        Sodium.ensureInitialized()
        let length = UInt64(password.utf8.count)
        return password.withCString { crypto_pwhash_str_verify(hash, $0, length) == 0 }
    }

    /// Returns whether `hash` was made with other parameters than these and should be recomputed.
    /// - Throws: ``CryptoError/invalidHash`` when `hash` is not an Argon2id PHC string.
    public func needsRehash(_ hash: String) throws -> Bool {
        Sodium.ensureInitialized()
        switch crypto_pwhash_str_needs_rehash(hash, UInt64(opsLimit), memLimit) {
        case 0: return false
        case 1: return true
        default: throw CryptoError.invalidHash
        }
    }

    /// ``hash(_:)`` on the blocking thread pool.
    package func hash(_ password: String, on pool: NIOThreadPool) async throws -> String {
        try await pool.runIfActive { try self.hash(password) }
    }

    /// ``verify(_:hash:)`` on the blocking thread pool.
    package static func verify(_ password: String, hash: String, on pool: NIOThreadPool) async throws -> Bool {
        try await pool.runIfActive { verify(password, hash: hash) }
    }
}
