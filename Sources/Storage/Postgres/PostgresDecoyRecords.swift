import AuthStorage
import AuthKernel
package import Foundation
import Logging
import PostgresNIO

/// Decoy accounts in the `decoy_accounts` table, shared by every instance (see ``DecoyAccounts``).
package struct PostgresDecoyRecords: DecoyRecordStore {
    let store: PostgresStore

    /// Decoys in `store`'s database.
    package init(store: PostgresStore) { self.store = store }

    package func update<R: Sendable>(_ key: String, now: Date, _ body: @Sendable (inout Data?) throws -> R) async throws -> R {
        let logger = store.logger
        // Stored by hash: the table does not collect the addresses people tried that have no account,
        // and any text (a NUL included, which PostgreSQL text refuses) makes a key.
        let key = Hex.encode(SHA256.hash(key))
        do {
            let outcome: Result<R, any Error> = try await store.withConnection { connection in try await connection.transaction(logger: logger) { connection in
                // The row exists before it is locked, so two first tries of one key serialise too.
                try await connection.query(
                    "INSERT INTO decoy_accounts (key, record, touched) VALUES (\(key), 'null'::jsonb, \(now)) ON CONFLICT (key) DO NOTHING",
                    logger: logger)
                var stored: Data?
                for try await text in try await connection.query(
                    "SELECT record::text FROM decoy_accounts WHERE key = \(key) FOR UPDATE", logger: logger
                ).decode(String.self) where text != "null" {
                    stored = Data(text.utf8)
                }
                let outcome: Result<R, any Error>
                do { outcome = .success(try body(&stored)) } catch { outcome = .failure(error) }
                if let stored {
                    let record = String(decoding: stored, as: UTF8.self)
                    try await connection.query(
                        "UPDATE decoy_accounts SET record = \(record)::jsonb, touched = \(now) WHERE key = \(key)", logger: logger)
                }
                return outcome
            } }
            return try outcome.get()
        } catch let error as PSQLError {
            throw store.unavailable(error)
        }
    }

    package func purge(untouchedSince date: Date) async throws {
        try await store.withConnection { _ = try await $0.query("DELETE FROM decoy_accounts WHERE touched < \(date)", logger: store.logger) }
    }
}
