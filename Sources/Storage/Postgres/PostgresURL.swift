import AuthKernel
import Foundation
import NIOSSL
import PostgresNIO

/// `storage.postgres.url` (`postgres://user:password@host:port/database`) and `tls`, as a client configuration.
enum PostgresURL {
    static func configuration(_ settings: AuthConfig.PostgresSettings) throws -> PostgresClient.Configuration {
        guard let url = URLComponents(string: settings.url), let host = url.host, !host.isEmpty else {
            throw PostgresStoreError("storage.postgres.url is not a valid postgres:// URL")
        }
        guard let user = url.user?.removingPercentEncoding, !user.isEmpty else {
            throw PostgresStoreError("storage.postgres.url names no user")
        }
        let database = String(url.path.drop { $0 == "/" }).removingPercentEncoding
        let tls: PostgresClient.Configuration.TLS =
            switch settings.tls {
            case "disable": .disable
            case "require": .require(.makeClientConfiguration())
            default: .prefer(.makeClientConfiguration())
            }
        return PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password?.removingPercentEncoding,
            database: database?.isEmpty == false ? database : nil, tls: tls
        )
    }
}
