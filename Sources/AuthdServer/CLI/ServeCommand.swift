import AuthdCore
import AuthStorage
import ArgumentParser
import AuthKernel
import Foundation
import Logging
import Metrics
import PostgresStore
import Prometheus
import Synchronization

/// `authd serve`: runs the server until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API from a data folder.",
        discussion: """
            Each option can also come from the environment (AUTHD_DATA, AUTHD_CONFIG, AUTHD_HOST,
            AUTHD_PORT); an option on the command line wins. AUTHD_LOG_LEVEL sets the log level
            (trace, debug, info, notice, warning, error, critical; default info). Every
            configuration key can be set as AUTHD_<SECTION>__<KEY> over the file, a secret as
            AUTHD_<SECTION>__<KEY>_FILE=PATH (docs/configuration.md); `authd check` shows where
            each value came from.

            Examples:
              authd serve
              authd serve --data /var/lib/authd --config /etc/authd.json --port 9000
            """
    )

    @Option(help: "Data folder: keys, store and outbox (created if missing). Default ./data.")
    var data: String?

    @Option(help: "Configuration file (JSON). Default DATA/authd.json when it exists.")
    var config: String?

    @Option(help: "Address to listen on. Default 127.0.0.1.")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one. Default 8080.")
    var port: Int?

    func run() async throws {
        // A peer that hangs up (a client, an SMTP server, sendmail) must give an error, not end the process.
        signal(SIGPIPE, SIG_IGN)
        // A file-size limit (ulimit -f) must fail the write with EFBIG, which the store survives, not end the process.
        signal(SIGXFSZ, SIG_IGN)
        // Every connection is a file descriptor: lift the soft limit (often 1024) to the hard one, so
        // `http.max_connections` (default 4096) is what bounds connections, not EMFILE.
        var files = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        }
        let env = ProcessInfo.processInfo.environment
        let dataFolder = data ?? env["AUTHD_DATA"] ?? "./data"
        let host = self.host ?? env["AUTHD_HOST"] ?? "127.0.0.1"
        var warnings: [String] = []
        let port: Int
        if let flag = self.port {
            guard (0...65_535).contains(flag) else { throw fail("the port must be a number from 0 to 65535, not \(flag)") }
            port = flag
        } else if let text = env["AUTHD_PORT"] {
            // Kubernetes sets AUTHD_PORT=tcp://IP:PORT for a service named authd: not ours (contract §14).
            if let number = Int(text), (0...65_535).contains(number) {
                port = number
            } else {
                port = 8080
                warnings.append("AUTHD_PORT is not a port number (a platform's variable?); ignored, listening on 8080")
            }
        } else {
            port = 8080
        }
        let configPath = config ?? env["AUTHD_CONFIG"]
        let authConfig: AuthConfig
        let root: [String: JSONValue]
        let environment: ConfigEnvironment
        do {
            environment = try ConfigLoading.environment(env)
            (authConfig, root) = try ConfigLoading.loadWithRoot(path: configPath, dataFolder: dataFolder, host: host, port: port, environment: environment)
        } catch let error as ConfigError {
            throw fail("configuration error: \(error.message)")
        }
        // AUTHD_LOG_LEVEL wins over log.level, so a one-off debug run needs no config edit.
        let level = (env["AUTHD_LOG_LEVEL"] ?? authConfig.log.level).flatMap(Logger.Level.init(rawValue:)) ?? .info
        let json = authConfig.log.format == "json"
        let levelBox = LogLevelBox(level)
        LoggingSystem.bootstrap({ label, provider in
            if json { return ReloadableLevelHandler(inner: JSONLogHandler(label: label, level: level, metadataProvider: provider), box: levelBox) }
            return ReloadableLevelHandler(inner: TextLogHandler(label: label, metadataProvider: provider), box: levelBox)
        }, metadataProvider: RequestInfo.metadataProvider)
        let logger = Logger(label: "authd")

        var options = AuthServer.Options(dataFolder: dataFolder, host: host, port: port, config: authConfig, logger: logger)
        options.addFullServerParts()
        if authConfig.metricsListen != nil {
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            options.metricsExposition = { registry.emitToBuffer() }
        }
        let reloader = ConfigReloader(
            load: { try ConfigLoading.loadWithRoot(path: configPath, dataFolder: dataFolder, host: host, port: port, environment: environment) },
            initialRoot: root, environment: environment, initialFormat: authConfig.log.format, dataFolder: dataFolder, level: levelBox, levelFromEnvironment: env["AUTHD_LOG_LEVEL"] != nil, logger: logger
        )
        options.extraServices = [reloader]
        options.onServerRunning = { url in
            FileHandle.standardOutput.write(Data("authd listening on \(url)\n".utf8))
        }
        let server: AuthServer
        do {
            try await PostgresBackend.configure(&options)
            server = try await AuthServer.make(options, registry: Authd.providers)
            reloader.box.server.withLock { $0 = server }
            // After the providers read their sections: a variable nothing read names no key in use.
            for warning in warnings + environment.unused() { logger.warning("\(warning)") }
        } catch let error as StoreError {
            throw fail("\(error)")
        } catch let error as ConfigError {
            throw fail("configuration error: \(error.message)")
        } catch let error as PostgresStoreError {
            throw fail("\(error)")
        }
        try await server.run()
        logger.info("stopped; store flushed")
    }

    private func fail(_ message: String) -> ExitCode { AdminConnection.fail(message) }
}
