import AuthStorage
package import AuthKernel
package import Foundation
package import Logging
import PostgresNIO
import Synchronization

/// Signing keys and server secrets in the database, sealed with the key-encryption key (KEK) every
/// instance is given from a file or the environment: a copy of the database alone holds no usable key.
///
/// Named secrets are derived: HMAC-SHA-256 of the name under one random master secret (stored sealed),
/// so every instance gets the same secret for a name without a write, also when a provider asks
/// while it is created. Secrets imported from a data folder (`authd import`) are stored by name and
/// win over derived ones, so PIN hashes and codes made before the move still verify.
package final class PostgresServerKeys: ServerKeys {
    let store: PostgresStore
    let box: SecretBox
    let master: [UInt8]
    let named: [String: [UInt8]]
    /// Names asked for so far (the providers ask at start-up): what an export must carry.
    private let asked = Mutex<Set<String>>([])

    private init(store: PostgresStore, box: SecretBox, master: [UInt8], named: [String: [UInt8]]) {
        self.store = store
        self.box = box
        self.master = master
        self.named = named
    }

    /// Name of the master secret's row.
    static let masterName = "master"

    /// Loads (creating the master secret on first use) with `kek`, 32 bytes.
    /// - Throws: ``PostgresStoreError`` when `kek` does not open what is stored (another instance's KEK differs).
    package static func open(store: PostgresStore, kek: [UInt8], logger: Logger) async throws -> PostgresServerKeys {
        let box = try SecretBox(key: kek)
        let fresh = box.seal(Base64URL.encode(SecureRandom.bytes(32)))
        try await store.client.query(
            "INSERT INTO server_secrets (name, sealed) VALUES (\(masterName), \(fresh)) ON CONFLICT (name) DO NOTHING", logger: logger)
        var secrets: [String: [UInt8]] = [:]
        for try await (name, sealed) in try await store.client.query(
            "SELECT name, sealed FROM server_secrets WHERE name NOT LIKE 'blob:%'", logger: logger
        ).decode((String, String).self) {
            guard let opened = box.open(sealed), let bytes = Base64URL.decode(opened), bytes.count == 32 else {
                throw PostgresStoreError(
                    "the key-encryption key does not open the database's secret \"\(name)\": every instance needs the KEK the database was first used with")
            }
            secrets[name] = bytes
        }
        guard let master = secrets.removeValue(forKey: masterName) else { throw PostgresStoreError("the master secret is missing") }
        return PostgresServerKeys(store: store, box: box, master: master, named: secrets)
    }

    /// Blobs are rows `blob:NAME` of `server_secrets`, sealed like the secrets; made under a lock,
    /// so instances starting together make one.
    package func loadOrCreateBlob(named name: String, logger: Logger, create: @Sendable () throws -> [UInt8]) async throws -> [UInt8] {
        let row = "blob:" + name, box = self.box
        return try await store.client.withTransaction(logger: logger) { connection -> [UInt8] in
            try await connection.query("SELECT pg_advisory_xact_lock(7245773)", logger: logger)
            for try await sealed in try await connection.query("SELECT sealed FROM server_secrets WHERE name = \(row)", logger: logger).decode(String.self) {
                guard let opened = box.open(sealed), let bytes = Base64URL.decode(opened) else {
                    throw PostgresStoreError("the key-encryption key does not open the database's key \"\(name)\"")
                }
                return bytes
            }
            let made = try create()
            let sealed = box.seal(Base64URL.encode(made))
            try await connection.query("INSERT INTO server_secrets (name, sealed) VALUES (\(row), \(sealed))", logger: logger)
            logger.info("created a new server key", metadata: ["key.name": "\(name)"])
            return made
        }
    }

    package func replaceBlob(named name: String, with bytes: [UInt8], logger: Logger) async throws {
        let row = "blob:" + name, sealed = box.seal(Base64URL.encode(bytes))
        try await store.client.query(
            "INSERT INTO server_secrets (name, sealed) VALUES (\(row), \(sealed)) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed", logger: logger)
    }

    package func loadOrCreateSecret(named name: String, logger: Logger) throws -> [UInt8] {
        asked.withLock { _ = $0.insert(name) }
        return named[name] ?? SHA256.hmac(key: master, message: Array("authd server secret\u{0}\(name)".utf8))
    }

    /// Stores a secret by name (an import), replacing a derived one from the next start on.
    package func importSecret(named name: String, _ secret: [UInt8], logger: Logger) async throws {
        let sealed = box.seal(Base64URL.encode(secret))
        try await store.client.query(
            "INSERT INTO server_secrets (name, sealed) VALUES (\(name), \(sealed)) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed",
            logger: logger)
    }

    package func exportFiles() async throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for key in try await loadOrCreateSigningKeys(now: Date(), logger: store.logger) {
            files["signing-\(key.kid).json"] = Array(try key.fileJSON().utf8)
        }
        for name in Set(named.keys).union(asked.withLock { $0 }) {
            files["\(name).key"] = try loadOrCreateSecret(named: name, logger: store.logger)
        }
        for try await (name, sealed) in try await store.client.query(
            "SELECT name, sealed FROM server_secrets WHERE name LIKE 'blob:%'", logger: store.logger
        ).decode((String, String).self) {
            guard let opened = box.open(sealed), let bytes = Base64URL.decode(opened) else { continue }
            files[String(name.dropFirst(5)) + ".bin"] = bytes
        }
        return files
    }

    package func importFiles(_ files: [String: [UInt8]], logger: Logger) async throws {
        var keys: [SigningKey] = []
        for (name, bytes) in files where name.hasPrefix("signing-") && name.hasSuffix(".json") {
            keys.append(try SigningKey(fileJSON: String(decoding: bytes, as: UTF8.self)))
        }
        guard keys.contains(where: { $0.retiredAt == nil }) else { throw PostgresStoreError("the export holds no active signing key") }
        for (name, bytes) in files where name.hasSuffix(".key") {
            guard bytes.count == 32 else { throw PostgresStoreError("\(name) in the export is not a 32-byte secret") }
            try await importSecret(named: String(name.dropLast(4)), bytes, logger: logger)
        }
        for (name, bytes) in files where name.hasSuffix(".bin") {
            let row = "blob:" + name.dropLast(4), sealed = box.seal(Base64URL.encode(bytes))
            try await store.client.query(
                "INSERT INTO server_secrets (name, sealed) VALUES (\(row), \(sealed)) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed",
                logger: logger)
        }
        try await store.client.withTransaction(logger: logger) { connection in
            try await connection.query("DELETE FROM signing_keys", logger: logger)
            for key in keys { try await Self.save(key, box: box, on: connection, logger: logger) }
        }
    }

    package func loadOrCreateSigningKeys(now: Date, logger: Logger) async throws -> [SigningKey] {
        // Under a lock, so instances starting together on an empty database create one key, not one each.
        try await store.client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7245772)", logger: logger)
            var keys: [SigningKey] = []
            for try await (kid, sealed) in try await connection.query("SELECT kid, sealed_key FROM signing_keys", logger: logger).decode((String, String).self) {
                guard let json = box.open(sealed) else {
                    throw PostgresStoreError("the key-encryption key does not open signing key \(kid): every instance needs the same KEK")
                }
                keys.append(try SigningKey(fileJSON: json))
            }
            if keys.isEmpty {
                let key = SigningKey(keyPair: Ed25519KeyPair(), createdAt: now)
                try await Self.save(key, box: box, on: connection, logger: logger)
                logger.info("created a new signing key", metadata: ["key.kid": "\(key.kid)"])
                keys.append(key)
            }
            return keys.sorted { $0.createdAt < $1.createdAt }
        }
    }

    package func save(_ key: SigningKey) async throws {
        try await store.client.withConnection { connection in
            try await Self.save(key, box: box, on: connection, logger: store.logger)
        }
    }

    private static func save(_ key: SigningKey, box: SecretBox, on connection: PostgresConnection, logger: Logger) async throws {
        let sealed = box.seal(try key.fileJSON())
        try await connection.query(
            """
            INSERT INTO signing_keys (kid, created_at, retired_at, sealed_key) VALUES (\(key.kid), \(key.createdAt), \(key.retiredAt), \(sealed))
            ON CONFLICT (kid) DO UPDATE SET retired_at = excluded.retired_at, sealed_key = excluded.sealed_key
            """, logger: logger)
    }
}

/// The key-encryption key: `storage.postgres.key_encryption_key_file`, else `AUTHD_KEY_ENCRYPTION_KEY`;
/// 64 hex digits (32 bytes). `openssl rand -hex 32` makes one.
package enum KeyEncryptionKey {
    /// Reads the KEK, or says where to put one.
    package static func load(_ settings: AuthConfig.PostgresSettings, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> [UInt8] {
        let text: String
        let source: String
        if let file = settings.keyEncryptionKeyFile {
            guard let contents = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw PostgresStoreError("storage.postgres.key_encryption_key_file: cannot read \(file)")
            }
            (text, source) = (contents, file)
        } else if let value = environment["AUTHD_KEY_ENCRYPTION_KEY"] {
            (text, source) = (value, "AUTHD_KEY_ENCRYPTION_KEY")
        } else {
            throw PostgresStoreError(
                "the PostgreSQL backend keeps signing keys sealed with a key-encryption key: set storage.postgres.key_encryption_key_file or AUTHD_KEY_ENCRYPTION_KEY (64 hex digits, e.g. from `openssl rand -hex 32`), the same on every instance")
        }
        guard let key = Hex.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)), key.count == 32 else {
            throw PostgresStoreError("\(source) must hold 64 hex digits (32 bytes)")
        }
        return key
    }
}

// It holds the master secret and the key-encryption key's box: a log line or a `dump` shows its name only (contract §17).
extension PostgresServerKeys: RedactedDescription {}
