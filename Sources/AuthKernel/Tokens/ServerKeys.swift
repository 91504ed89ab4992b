import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import Foundation
package import Logging

/// Where the server's keys live: the Ed25519 signing keys and named 32-byte secrets (the code HMAC
/// key, a provider's pepper…). ``KeyFolder`` keeps them in `DATA/keys/`; a database backend keeps
/// them sealed with a key-encryption key, so every instance signs and verifies with the same ones.
package protocol ServerKeys: Sendable {
    /// The signing keys, oldest first, creating the first one when there is none.
    func loadOrCreateSigningKeys(now: Date, logger: Logger) async throws -> [SigningKey]
    /// Saves a new signing key or a retired one.
    func save(_ key: SigningKey) async throws
    /// A named 32-byte secret: created on first use, the same ever after (and on every instance).
    /// Synchronous, so providers can take theirs while they are created.
    func loadOrCreateSecret(named name: String, logger: Logger) throws -> [UInt8]
    /// A named secret of any length (the OpenID Provider's RSA key, DER): `create` makes it on first
    /// use, and it is the same ever after, on every instance.
    func loadOrCreateBlob(named name: String, logger: Logger, create: @Sendable () throws -> [UInt8]) async throws -> [UInt8]
    /// Replaces a named blob (a rotated key), durably, on every instance.
    func replaceBlob(named name: String, with bytes: [UInt8], logger: Logger) async throws
    /// Every key and secret in use, as the files of a key folder (`signing-KID.json`, `NAME.key`),
    /// for `authd export`.
    func exportFiles() async throws -> [String: [UInt8]]
    /// Takes an export's files: its signing keys replace these, its secrets are kept by name.
    func importFiles(_ files: [String: [UInt8]], logger: Logger) async throws
}

extension KeyFolder: ServerKeys {
    package func loadOrCreateBlob(named name: String, logger: Logger, create: @Sendable () throws -> [UInt8]) throws -> [UInt8] {
        let file = path + "/\(name).bin"
        if let bytes = try DurableFile.read(file), !bytes.isEmpty { return bytes }
        let made = try create()
        try DurableFile.replace(file, with: made, mode: 0o600)
        logger.info("created a new server key", metadata: ["key.name": "\(name)"])
        return made
    }

    package func replaceBlob(named name: String, with bytes: [UInt8], logger: Logger) throws {
        try DurableFile.replace(path + "/\(name).bin", with: bytes, mode: 0o600)
    }

    package func exportFiles() throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) where !name.hasSuffix(".tmp") && !name.hasPrefix(".") {
            if let bytes = try DurableFile.read(path + "/" + name) { files[name] = bytes }
        }
        return files
    }

    package func importFiles(_ files: [String: [UInt8]], logger: Logger) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasPrefix("signing-") && files[name] == nil {
            try DurableFile.check(unlink(path + "/" + name), "unlink", path + "/" + name)
        }
        for (name, bytes) in files { try DurableFile.replace(path + "/" + name, with: bytes, mode: 0o600) }
    }
}

extension SigningKey {
    /// The key as the JSON of a key file (the private seed included: seal or protect it).
    package func fileJSON() throws -> String {
        let file = File(kid: kid, seed: Base64URL.encode(keyPair.seed), createdAt: createdAt, retiredAt: retiredAt)
        return String(decoding: try StoreCoding.encoder().encode(file), as: UTF8.self)
    }

    /// A key from ``fileJSON()``; checks that the kid matches the key.
    package init(fileJSON json: String) throws {
        let file = try StoreCoding.decoder().decode(File.self, from: Data(json.utf8))
        guard let seed = Base64URL.decode(file.seed) else { throw CryptoError.invalidKey }
        self.init(keyPair: try Ed25519KeyPair(seed: seed), createdAt: file.createdAt, retiredAt: file.retiredAt)
        guard kid == file.kid else { throw ConfigError("signing key \(file.kid): kid does not match the key") }
    }
}
