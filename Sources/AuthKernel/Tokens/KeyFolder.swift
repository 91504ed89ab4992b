import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import Foundation
package import Logging

/// `DATA/keys/`: signing keys and server secrets, directory mode 0700, files mode 0600.
package struct KeyFolder: Sendable {
    /// Path of the folder.
    package let path: String

    /// Opens (creating) the key folder inside a data folder and tightens its mode to 0700.
    package init(dataFolder: String) throws {
        path = dataFolder + "/keys"
        try DurableFile.makeDirectory(path, mode: 0o700)
    }

    /// Loads the signing keys, creating the first one when there is none.
    package func loadOrCreateSigningKeys(now: Date, logger: Logger) throws -> [SigningKey] {
        let decoder = StoreCoding.decoder()
        var keys: [SigningKey] = []
        let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("signing-") && $0.hasSuffix(".json") }.sorted()
        for name in names {
            let file = path + "/" + name
            try tightenMode(file, logger: logger)
            guard let bytes = try DurableFile.read(file) else { continue }
            do {
                let f = try decoder.decode(SigningKey.File.self, from: Data(bytes))
                guard let seed = Base64URL.decode(f.seed) else { throw CryptoError.invalidKey }
                let key = SigningKey(keyPair: try Ed25519KeyPair(seed: seed), createdAt: f.createdAt, retiredAt: f.retiredAt)
                guard key.kid == f.kid else { throw ConfigError("\(file): kid does not match the key") }
                keys.append(key)
            } catch let error as ConfigError {
                throw error
            } catch {
                throw ConfigError("\(file) is not a valid signing key file (\(error))")
            }
        }
        if keys.isEmpty {
            let key = SigningKey(keyPair: Ed25519KeyPair(), createdAt: now)
            try save(key)
            logger.info("created a new signing key", metadata: ["key.kid": "\(key.kid)"])
            keys.append(key)
        }
        return keys.sorted { $0.createdAt < $1.createdAt }
    }

    /// Writes a signing key file durably with mode 0600.
    package func save(_ key: SigningKey) throws {
        let file = SigningKey.File(kid: key.kid, seed: Base64URL.encode(key.keyPair.seed), createdAt: key.createdAt, retiredAt: key.retiredAt)
        let bytes = try [UInt8](StoreCoding.encoder().encode(file))
        try DurableFile.replace(path + "/signing-\(key.kid).json", with: bytes, mode: 0o600)
    }

    /// Loads a named 32-byte secret (e.g. the key that hashes one-time codes), creating it when missing.
    package func loadOrCreateSecret(named name: String, logger: Logger) throws -> [UInt8] {
        let file = path + "/\(name).key"
        if let bytes = try DurableFile.read(file) {
            try tightenMode(file, logger: logger)
            guard bytes.count == 32 else { throw ConfigError("\(file) must hold exactly 32 bytes") }
            return bytes
        }
        let secret = SecureRandom.bytes(32)
        try DurableFile.replace(file, with: secret, mode: 0o600)
        logger.info("created a new server secret", metadata: ["key.name": "\(name)"])
        return secret
    }

    private func tightenMode(_ file: String, logger: Logger) throws {
        let mode = (try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) ?? 0
        if mode & 0o077 != 0 {
            logger.warning("key file was readable by others; setting mode 0600", metadata: ["file": "\(file)"])
            try DurableFile.check(chmod(file, 0o600), "chmod", file)
        }
    }
}
