import CCrypt
import CSodium
import Crypto
import CryptoExtras
import AuthKernel
import Foundation

/// Password hashes made by another system (contract §11), checked once at the user's first sign-in
/// and then replaced by authd's Argon2id: bcrypt (`$2a$`, `$2b$`, `$2y$`, through the system's
/// libxcrypt), Django's `pbkdf2_sha256$`, `bcrypt_sha256$` and `argon2$`, and Argon2 PHC strings
/// (through libsodium). Costlier parameters than the bounds below are refused, so an imported
/// file cannot make a sign-in take minutes or gigabytes (contract §11, §12): at import, line by line,
/// and again at every check, so a hash stored some other way is refused too.
public enum ImportedPasswordHash {
    /// The most bcrypt cost accepted.
    public static let maxBcryptCost = 14
    /// The most PBKDF2 iterations accepted.
    public static let maxPBKDF2Iterations = 2_000_000
    /// The most Argon2 memory accepted, KiB (256 MiB).
    public static let maxArgon2MemoryKiB = 262_144
    /// The most Argon2 passes (`t`) accepted: `t=4294967295` would hold a hashing thread for hours.
    public static let maxArgon2Iterations = 10
    /// The most Argon2 lanes (`p`) accepted (libsodium computes them one after another).
    public static let maxArgon2Parallelism = 8

    /// A recognised hash.
    public enum Format: Sendable, Equatable {
        /// bcrypt with its cost.
        case bcrypt(cost: Int)
        /// Django's PBKDF2-HMAC-SHA256 with its iterations.
        case djangoPBKDF2(iterations: Int)
        /// Django's bcrypt of the SHA-256 hex digest.
        case djangoBcryptSHA256(cost: Int)
        /// Argon2id or Argon2i, PHC string (Django's `argon2$` prefix removed), with its memory,
        /// passes and lanes.
        case argon2(memoryKiB: Int, iterations: Int, parallelism: Int)
    }

    /// What `hash` is, or why it cannot be imported.
    public static func format(of hash: String) -> Result<Format, ImportError> {
        guard hash.utf8.count <= 512 else { return .failure(ImportError("the hash is longer than any supported format")) }
        if let cost = bcryptCost(hash) {
            return cost <= maxBcryptCost ? .success(.bcrypt(cost: cost)) : .failure(ImportError("bcrypt cost \(cost) is over \(maxBcryptCost)"))
        }
        if hash.hasPrefix("bcrypt_sha256$") {
            guard let cost = bcryptCost(String(hash.dropFirst(14))) else { return .failure(ImportError("bcrypt_sha256 without a bcrypt hash")) }
            return cost <= maxBcryptCost ? .success(.djangoBcryptSHA256(cost: cost)) : .failure(ImportError("bcrypt cost \(cost) is over \(maxBcryptCost)"))
        }
        if hash.hasPrefix("pbkdf2_sha256$") {
            let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 4, let iterations = Int(parts[1]), iterations > 0, !parts[2].isEmpty, Data(base64Encoded: String(parts[3]))?.count == 32 else {
                return .failure(ImportError("not a Django pbkdf2_sha256 hash"))
            }
            return iterations <= maxPBKDF2Iterations
                ? .success(.djangoPBKDF2(iterations: iterations)) : .failure(ImportError("\(iterations) PBKDF2 iterations are over \(maxPBKDF2Iterations)"))
        }
        let phc = hash.hasPrefix("argon2$") ? String(hash.dropFirst(6)) : hash
        if phc.hasPrefix("$argon2id$") || phc.hasPrefix("$argon2i$") { return argon2Format(phc) }
        return .failure(ImportError("an unknown hash format"))
    }

    /// Whether `password` (as the person typed it: the other system did not normalise it) matches
    /// `hash`. Slow by design: call it where blocking is allowed (the password hashing threads).
    public static func verify(_ password: String, hash: String) -> Bool {
        guard case .success(let format) = format(of: hash) else { return false }
        switch format {
        case .bcrypt:
            return bcrypt(Array(password.utf8), matches: hash)
        case .djangoBcryptSHA256:
            // Django hashes the hex digest: bcrypt alone would ignore what follows the 72nd byte.
            let digest = Hex.encode(AuthKernel.SHA256.hash(password))
            return bcrypt(Array(digest.utf8), matches: String(hash.dropFirst(14)))
        case .djangoPBKDF2(let iterations):
            let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
            guard let expected = Data(base64Encoded: String(parts[3])),
                let key = try? KDF.Insecure.PBKDF2.deriveKey(
                    from: Array(password.utf8), salt: Array(parts[2].utf8), using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: iterations)
            else { return false }
            let derived = key.withUnsafeBytes { Array($0) }
            return ConstantTime.equals(derived, Array(expected))
        case .argon2:
            let phc = hash.hasPrefix("argon2$") ? String(hash.dropFirst(6)) : hash
            return phc.withCString { h in
                password.withCString { p in crypto_pwhash_str_verify(h, p, UInt64(strlen(p))) == 0 }
            }
        }
    }

    /// Why a hash cannot be imported.
    public struct ImportError: Error, Sendable, CustomStringConvertible {
        /// The reason, for the import report.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The parameters of an Argon2 PHC string (`$argon2id$v=19$m=65536,t=3,p=4$salt$hash`), each
    /// within its bound.
    private static func argon2Format(_ phc: String) -> Result<Format, ImportError> {
        var parameters: [Substring: Int] = [:]
        for field in phc.split(separator: "$").first(where: { $0.hasPrefix("m=") })?.split(separator: ",") ?? [] {
            let pair = field.split(separator: "=", maxSplits: 1)
            // Digits only, at most 10 of them: no sign, no overflow.
            guard pair.count == 2, (1...10).contains(pair[1].utf8.count), pair[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(pair[1]), value > 0, parameters.updateValue(value, forKey: pair[0]) == nil
            else { return .failure(ImportError("an Argon2 hash with a malformed parameter \(field)")) }
        }
        guard let memory = parameters["m"], let iterations = parameters["t"], let parallelism = parameters["p"] else {
            return .failure(ImportError("an Argon2 hash without its m, t and p parameters"))
        }
        if memory > maxArgon2MemoryKiB { return .failure(ImportError("Argon2 memory \(memory) KiB is over \(maxArgon2MemoryKiB)")) }
        if iterations > maxArgon2Iterations { return .failure(ImportError("Argon2 time cost t=\(iterations) is over \(maxArgon2Iterations)")) }
        if parallelism > maxArgon2Parallelism { return .failure(ImportError("Argon2 parallelism p=\(parallelism) is over \(maxArgon2Parallelism)")) }
        return .success(.argon2(memoryKiB: memory, iterations: iterations, parallelism: parallelism))
    }

    /// `$2a$NN$`, `$2b$NN$` or `$2y$NN$` followed by 53 characters: the cost NN.
    private static func bcryptCost(_ hash: String) -> Int? {
        let b = Array(hash.utf8)
        guard b.count == 60, b[0] == UInt8(ascii: "$"), b[1] == UInt8(ascii: "2"), [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(b[2]),
            b[3] == UInt8(ascii: "$"), b[6] == UInt8(ascii: "$"), let cost = Int(String(decoding: b[4..<6], as: UTF8.self)), cost >= 4
        else { return nil }
        return cost
    }

    /// libxcrypt's bcrypt of `password` with `hash`'s salt and cost, compared in constant time.
    private static func bcrypt(_ password: [UInt8], matches hash: String) -> Bool {
        // bcrypt reads at most 72 bytes and stops at NUL; a NUL inside would make two passwords one.
        guard !password.contains(0) else { return false }
        var data = crypt_data()
        let result: String? = (password + [0]).withUnsafeBufferPointer { p in
            hash.withCString { setting in
                p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { key in
                    crypt_r(key, setting, &data).map { String(cString: $0) }
                }
            }
        }
        guard let result, result.utf8.count == hash.utf8.count else { return false }
        return ConstantTime.equals(Array(result.utf8), Array(hash.utf8))
    }
}
