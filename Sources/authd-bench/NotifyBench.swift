import ArgumentParser
import Foundation
import Logging
import PostgresNIO

/// The database's own `LISTEN/NOTIFY` round trip: the floor under the revocation delay between
/// instances that scenario (q) measures (contract §19).
struct NotifyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "notify", abstract: "LISTEN/NOTIFY round trips on one connection, p50 and p99 in ms, as JSON.")

    @Option(help: "host:port of the PostgreSQL server.") var server: String
    @Option(help: "User.") var user: String = "authd"
    @Option(help: "Database.") var database: String = "authd"
    @Option(help: "Notifications sent.") var count: Int = 200

    func run() async throws {
        let parts = server.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]) else { throw ValidationError("--server is host:port") }
        let logger = Logger(label: "authd-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let configuration = PostgresConnection.Configuration(host: String(parts[0]), port: port, username: user, password: nil, database: database, tls: .disable)
        let listener = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        let sender = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
        var delays: [Double] = []
        try await listener.listen(on: "authd_bench") { notifications in
            var received = notifications.makeAsyncIterator()
            for i in 0..<count {
                let start = ContinuousClock.now
                try await sender.query("SELECT pg_notify('authd_bench', \(String(i)))", logger: logger)
                _ = try await received.next()
                let took = ContinuousClock.now - start
                delays.append(Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15)
            }
        }
        try await listener.close()
        try await sender.close()
        delays.sort()
        func pct(_ p: Double) -> Double { (delays[min(delays.count - 1, Int((p / 100 * Double(delays.count - 1)).rounded()))] * 100).rounded() / 100 }
        let out = ["notify_p50_ms": pct(50), "notify_p99_ms": pct(99)]
        FileHandle.standardOutput.write(try JSONEncoder().encode(out) + Data("\n".utf8))
    }
}
