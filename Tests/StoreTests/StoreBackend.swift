import AuthStorage
import AuthKernel
import Foundation
import Testing
import Logging
import PostgresNIO
import PostgresStore

/// The backends the store suite runs on: the file store always, PostgreSQL when
/// `AUTHD_TEST_POSTGRES_URL` names a server where the tests may create databases
/// (`make test` starts a throwaway one with IntegrationTests/postgres/cluster).
enum StoreBackend: String, CustomStringConvertible, Sendable {
    case file, postgres

    var description: String { rawValue }

    static var serverURL: String? { ProcessInfo.processInfo.environment["AUTHD_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 } }

    static var all: [StoreBackend] { serverURL == nil ? [.file] : [.file, .postgres] }

    /// A store on a fresh database for `.postgres` (migrated); nil for `.file` (the harness opens its folder).
    func makeStore(logger: Logger = Logger(label: "store-test")) async throws -> (any AuthStore)? {
        switch self {
        case .file: return nil
        case .postgres: return try await PostgresStore.open(try await Self.freshDatabase(logger: logger), logger: logger)
        }
    }

    /// Settings for a new, migrated database on the test server.
    static func freshDatabase(logger: Logger = Logger(label: "store-test")) async throws -> AuthConfig.PostgresSettings {
        let server = try require_url()
        let name = "authd_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let admin = try PostgresStore.connect(AuthConfig.PostgresSettings(url: server), logger: logger)
        _ = try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        await admin.close()
        var url = try #require(URLComponents(string: server))
        url.path = "/\(name)"
        var settings = AuthConfig.PostgresSettings(url: try #require(url.string))
        settings.tls = "disable"
        // Waits for a connection are bounded for a server (5 s); these tests pile dozens of racing
        // writes on one row of a shared, busy machine, and test exactness, not the bound.
        settings.acquireTimeout = 60
        let migrating = try PostgresStore.connect(settings, logger: logger)
        _ = try await migrating.migrate()
        await migrating.close()
        return settings
    }

    private static func require_url() throws -> String {
        guard let url = serverURL else { throw PostgresStoreError("AUTHD_TEST_POSTGRES_URL is not set") }
        return url
    }
}
