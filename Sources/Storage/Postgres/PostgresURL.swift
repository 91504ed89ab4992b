import AuthKernel
import Foundation
import NIOSSL
import PostgresNIO

/// `storage.postgres.url` (`postgres://user:password@host:port/database`), `tls` and `ca_file`, as
/// the configuration of the pool and of a single connection.
struct PostgresURL {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String?
    /// nil: no TLS.
    var tls: TLSConfiguration?
    /// Whether a server without TLS is refused.
    var tlsRequired: Bool

    init(_ settings: AuthConfig.PostgresSettings) throws {
        guard let url = URLComponents(string: settings.url), let host = url.host, !host.isEmpty else {
            throw PostgresStoreError("storage.postgres.url is not a valid postgres:// URL")
        }
        guard let user = url.user?.removingPercentEncoding, !user.isEmpty else {
            throw PostgresStoreError("storage.postgres.url names no user")
        }
        let database = String(url.path.drop { $0 == "/" }).removingPercentEncoding
        (self.host, self.port, self.user) = (host, url.port ?? 5432, user)
        password = url.password?.removingPercentEncoding
        self.database = database?.isEmpty == false ? database : nil
        // The modes mean what libpq's sslmode values of the same names mean.
        var tls = TLSConfiguration.makeClientConfiguration()
        switch settings.tls {
        case "disable":
            self.tls = nil
        case "verify-full":
            if let caFile = settings.caFile { tls.additionalTrustRoots = [.file(caFile)] }
            self.tls = tls
        default:
            tls.certificateVerification = .none
            self.tls = tls
        }
        tlsRequired = settings.tls == "require" || settings.tls == "verify-full"
    }

    /// Where, for messages: never the URL, which may hold the password.
    var place: String { "\(host):\(port)/\(database ?? user)" }

    /// The pool's configuration.
    var client: PostgresClient.Configuration {
        let mode: PostgresClient.Configuration.TLS =
            if let tls { tlsRequired ? .require(tls) : .prefer(tls) } else { .disable }
        return PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: mode)
    }

    /// One connection's configuration (the start-up check, which must fail at once, not after the
    /// pool's retries).
    func connection() throws -> PostgresConnection.Configuration {
        let mode: PostgresConnection.Configuration.TLS =
            if let tls {
                tlsRequired ? .require(try NIOSSLContext(configuration: tls)) : .prefer(try NIOSSLContext(configuration: tls))
            } else { .disable }
        return PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: mode)
    }
}
