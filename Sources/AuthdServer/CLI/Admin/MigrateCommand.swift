import AuthdCore
import ArgumentParser
import AuthKernel
import Foundation
import Logging
import PostgresStore

/// `authd migrate`: brings a PostgreSQL database to the schema this authd needs.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the PostgreSQL schema migrations this authd needs (storage.backend = postgres).",
        discussion: """
            Safe to run again and from several hosts at once (an advisory lock serialises them). A server
            refuses to start on a database that is not at exactly its schema version.

            Example:
              authd migrate --config /etc/authd.json
            """
    )

    @OptionGroup var target: DataFolderOptions

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "authd")
        let config: AuthConfig
        do {
            config = try ConfigLoading.load(path: target.config, dataFolder: target.folder)
        } catch let error as ConfigError {
            throw AdminConnection.fail("configuration error: \(error.message)")
        }
        guard let settings = config.storage.postgres else {
            throw AdminConnection.fail("the configuration names no database: set storage.backend to \"postgres\" and storage.postgres.url")
        }
        let store: PostgresStore
        do {
            _ = try await PostgresStore.schemaVersion(settings, logger: logger)  // fails fast on a wrong address or certificate
            store = try PostgresStore.connect(settings, logger: logger)
        } catch let error as PostgresStoreError {
            throw AdminConnection.fail("\(error)")
        }
        do {
            let applied = try await store.migrate()
            await store.close()
            let text = applied.isEmpty
                ? "the database is at schema version \(PostgresStore.requiredSchemaVersion): nothing to do\n"
                : "applied migration\(applied.count == 1 ? "" : "s") \(applied.map(String.init).joined(separator: ", ")); schema version \(PostgresStore.requiredSchemaVersion)\n"
            FileHandle.standardOutput.write(Data(text.utf8))
        } catch {
            await store.close()
            throw AdminConnection.fail("migration failed: \(String(reflecting: error))")
        }
    }
}
