package import AuthdCore
import PostgresStore
import AuthKernel
import Logging

/// Sets a server up on PostgreSQL (`storage.backend = postgres`): the store, rate-limit counters,
/// decoy accounts, sealed keys and cluster events, all on one connection pool.
package enum PostgresBackend {
    /// Fills `options` for the database `options.config` names; does nothing for the file backend.
    /// - Throws: ``PostgresStoreError`` (unreachable, unmigrated or newer schema, missing or wrong KEK).
    package static func configure(_ options: inout AuthServer.Options) async throws {
        guard options.config.storage.backend == "postgres", let settings = options.config.storage.postgres else { return }
        let kek = try KeyEncryptionKey.load(settings)
        let store = try await PostgresStore.open(settings, logger: options.logger)
        do {
            options.store = store
            options.rateLimitCounters = PostgresRateLimitCounters(store: store)
            options.keys = try await PostgresServerKeys.open(store: store, kek: kek, logger: options.logger)
            options.cluster = PostgresClusterEvents(store: store)
            options.decoyRecords = PostgresDecoyRecords(store: store)
        } catch {
            await store.close()
            throw error
        }
    }
}
