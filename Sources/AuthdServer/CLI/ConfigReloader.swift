import AuthdCore
import AuthStorage
import AuthKernel
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The log level every handler reads on each line, so SIGHUP can change it.
final class LogLevelBox: Sendable {
    private let value: Mutex<Logger.Level>
    init(_ level: Logger.Level) { value = Mutex(level) }
    var level: Logger.Level {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// A handler whose level is the shared ``LogLevelBox``'s.
///
/// It keeps the logger's metadata itself and hands it to `inner` only with a line: Hummingbird sets
/// a request id on every request, and `StreamLogHandler` renders all of its metadata again on each
/// set, 2.5-4 % of the server's time on every endpoint (profiled), for lines that are rarely written.
struct ReloadableLevelHandler<Inner: LogHandler>: LogHandler {
    var inner: Inner
    let box: LogLevelBox
    var metadata: Logger.Metadata = [:]

    init(inner: Inner, box: LogLevelBox) {
        self.inner = inner
        self.box = box
    }

    var logLevel: Logger.Level {
        get { box.level }
        set { box.level = newValue }
    }
    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        guard !metadata.isEmpty else { return inner.log(event: event) }
        var event = event
        // The line's own metadata wins over the logger's, as swift-log merges them.
        event.metadata = metadata.merging(event.metadata ?? [:]) { _, own in own }
        inner.log(event: event)
    }
}

/// SIGHUP: re-reads the configuration file and applies what can change while serving (log level,
/// mail settings, rate limits; templates are read at each send anyway), and says in the log what
/// it reloaded and which changes wait for a restart. A file with an error changes nothing.
struct ConfigReloader: Service {
    final class ServerBox: Sendable {
        let server = Mutex<AuthServer?>(nil)
    }
    let box = ServerBox()
    let load: @Sendable () throws -> (AuthConfig, [String: JSONValue])
    let initialRoot: [String: JSONValue]
    /// The variables over the file, which every reload reads again.
    let environment: ConfigEnvironment
    /// `log.format` as started; a change waits for a restart.
    let initialFormat: String
    let dataFolder: String
    let level: LogLevelBox
    let levelFromEnvironment: Bool
    let logger: Logger

    func run() async throws {
        // The providers have read their sections by now: what the variables set there is in effect too.
        var previous = environment.applied(to: initialRoot)
        let format = initialFormat
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            guard let server = box.server.withLock({ $0 }) else { continue }
            let config: AuthConfig
            let root: [String: JSONValue]
            do {
                (config, root) = try load()
            } catch {
                // Never let a bad file end the server: this service's failure would stop the group.
                let message = (error as? ConfigError)?.message ?? "\(error)"
                logger.error("SIGHUP: the configuration was not reloaded; nothing changed", metadata: ["error": "\(message)"])
                continue
            }
            let invalid = AuthServer.invalidRateLimits(root)
            guard invalid.isEmpty else {
                logger.error(
                    "SIGHUP: the configuration was not reloaded; nothing changed",
                    metadata: ["error": "not a valid rate limit ({\"limit\": 1…1000000, \"window\": seconds}): \(invalid.joined(separator: ", "))"]
                )
                continue
            }
            var report = await server.reload(config: config, root: root, previous: previous, dataFolder: dataFolder)
            let name = config.log.level ?? "info"
            if !levelFromEnvironment, let newLevel = Logger.Level(rawValue: name), newLevel != level.level {
                level.level = newLevel
                report.reloaded.append("log level (\(name))")
            }
            if config.log.format != format { report.needRestart.append("log.format") }
            previous = root
            logger.notice(
                "SIGHUP: configuration reloaded",
                metadata: [
                    "reloaded": "\(report.reloaded.isEmpty ? "nothing changed" : report.reloaded.joined(separator: ", "))",
                    "needs_restart": "\(report.needRestart.isEmpty ? "-" : report.needRestart.joined(separator: ", "))",
                ]
            )
        }
    }
}

// It holds the parsed configuration file: ServiceLifecycle logs it at debug level by its name only (contract §17).
extension ConfigReloader: RedactedDescription {}
