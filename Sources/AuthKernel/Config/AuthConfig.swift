import AuthStorage
package import Foundation

/// The kernel's settings, read from the configuration file with safe defaults for every key.
///
/// Provider sections (`"email": {...}`) are kept raw in ``providerSections`` and read by the
/// provider itself when it is registered, so a provider owns its keys and their validation.
package struct AuthConfig: Sendable {
    /// `iss` of access tokens. Defaults to `http://HOST:PORT`.
    package var issuer: String
    /// Whether ``issuer`` is the default (not set in the file): with `--port 0` the server then names
    /// the port it actually bound.
    package var issuerIsDefault = false
    /// `aud` of access tokens.
    package var audience: String
    /// Provider ids registered at start-up, in order.
    package var providers: [String]
    /// Token lifetimes.
    package var tokens: TokenSettings
    /// Mail delivery.
    package var mail: MailSettings
    /// Store tuning.
    package var storage: StorageSettings
    /// Seconds a connection may stay idle, or send a request too slowly, before it is closed (`http.idle_timeout`).
    package var idleTimeout: Int = 60
    /// Seconds SIGTERM waits for requests in flight before cancelling them (`http.shutdown_timeout`).
    package var shutdownTimeout: Int = 10
    /// Seconds a request's head and body may take to arrive, however steadily bytes trickle in (`http.request_timeout`).
    package var requestTimeout: Int = 30
    /// Connections served at once; beyond it new ones wait to be accepted (`http.max_connections`).
    package var maxConnections: Int = 4096
    /// Connections one client network may hold at once (`http.max_connections_per_client`).
    package var maxConnectionsPerClient: Int = 256
    /// Seconds after an interactive sign-in during which a session may add or change credentials (`auth.fresh_auth`).
    package var freshAuth: Int = 600
    /// Reverse proxies whose `X-Forwarded-For` is believed (`http.trusted_proxies`; default none).
    package var trustedProxies = TrustedProxies.none
    /// HTTPS served by authd itself (`http.tls`); nil serves plain HTTP.
    package var tls: TLSFiles?
    /// A Unix-domain socket serving the same API to processes on this machine (`http.unix_socket`).
    package var unixSocket: String?
    /// Whether the TCP listener runs (`http.tcp`, default true; false with a Unix socket serves only that).
    package var tcp = true
    /// The `AUTHD_*` variables read over the file, and where each value in effect came from.
    package var environment: ConfigEnvironment?
    /// Whether the operator's console is served at `/admin` (`console.enabled`, default true).
    package var consoleEnabled = true

    /// `http.tls`: PEM files, read at start-up and again on SIGHUP.
    package struct TLSFiles: Sendable, Equatable {
        /// The certificate chain, leaf first (`cert_file`).
        package var certificateFile: String
        /// Its private key (`key_file`).
        package var keyFile: String
        /// Creates the settings.
        package init(certificateFile: String, keyFile: String) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }
    /// Logging (`log.format`, `log.level`).
    package var log = LogSettings()
    /// The audit log (`audit.max_bytes`, `audit.keep`).
    package var audit = AuditSettings()
    /// Where `GET /metrics` is served (`metrics.listen`, `"HOST:PORT"`); nil (the default) serves no metrics.
    package var metricsListen: (host: String, port: Int)?
    /// Device sign-in (the `device` section).
    package var device = DeviceSettings()
    /// The OpenID Provider (contract §13): the `openid` section.
    package var openID = OpenIDSettings()
    /// `webhooks` and `webhook_delivery` (contract §9).
    package var webhooks = WebhookSettings()
    /// `push` (contract §9).
    package var push = PushSettings()
    /// Who may make an account (contract §17): the `signup` section.
    package var signup = SignupSettings()

    /// `signup`: `mode` (`open`, `invite`, `domains`), `domains`, `anonymous`.
    package struct SignupSettings: Sendable, Equatable {
        /// `signup.mode`.
        package var mode = SignupPolicy.Mode.open
        /// `signup.domains`, lower case.
        package var domains: [String] = []
        /// `signup.anonymous` (default: only when the mode is `open`).
        package var anonymous = true
        /// Creates the defaults.
        package init() {}
    }
    /// Raw configuration sections of providers, by provider id.
    package var providerSections: [String: ConfigSection]
    /// Which values are secrets, for what shows the configuration (`authd check`, the console):
    /// the kernel's own, and those of every provider the server has (set when it is built).
    package var secrets = ConfigSecrets()

    /// How log lines look and which are written.
    package struct LogSettings: Sendable, Equatable {
        /// `text` (one readable line each) or `json` (one JSON object per line).
        package var format: String = "text"
        /// Least severe level written; nil leaves it to `AUTHD_LOG_LEVEL` (default info).
        package var level: String?
        /// Creates the defaults.
        package init() {}
    }

    /// When `DATA/audit.jsonl` is rotated and how many old files are kept.
    package struct AuditSettings: Sendable, Equatable {
        /// Size after which the file is renamed to `audit-N.jsonl` and a new one begun.
        package var maxBytes: Int = 16 << 20
        /// Rotated files kept (`audit-1.jsonl` is the newest).
        package var keep: Int = 5
        /// Creates the defaults.
        package init() {}
    }

    /// Lifetimes and limits of access and refresh tokens.
    package struct TokenSettings: Sendable {
        /// Access token lifetime, seconds.
        package var accessTTL: Int = 3600
        /// Refresh token lifetime, seconds, counted from its issue (each rotation issues a new one).
        package var refreshTTL: Int = 2_592_000
        /// How long an already-rotated refresh token may still be used, seconds (concurrent refreshes).
        package var refreshReuseGrace: Int = 10
        /// Refreshes allowed per session per `refreshRate.window`.
        package var refreshRate = RateLimitRule(limit: 30, window: 60)
        /// Clock skew tolerated when checking `exp`, `nbf` and `iat`, seconds.
        package var clockSkew: Int = 30
        /// API keys (the `api_keys` section).
        package var apiKeys = APIKeySettings()
        /// Optional claims access tokens carry (`tokens.claims`): any of `email`, `email_verified`.
        package var claims: Set<String> = []
        /// Creates the defaults.
        package init() {}
    }

    /// Device sign-in (contract §7): the `device` section.
    package struct DeviceSettings: Sendable {
        /// Seconds a user code lives (`code_ttl`).
        package var codeTTL: Int = 600
        /// Seconds a device waits between polls (`interval`).
        package var interval: Int = 5
        /// Where people go to enter the code (`verification_uri`); nil: `{issuer}/device`.
        package var verificationURI: String?
        /// New requests per client network (`starts_per_ip`).
        package var startsPerIP = RateLimitRule(limit: 30, window: 600)
        /// User codes a signed-in session may look up, approve or deny (`lookups_per_session`).
        package var lookupsPerSession = RateLimitRule(limit: 10, window: 600)
        /// User codes one client network may look up, approve or deny (`lookups_per_ip`).
        package var lookupsPerIP = RateLimitRule(limit: 30, window: 600)
        /// Creates the defaults.
        package init() {}
    }

    /// The OpenID Provider's limits (contract §13): the `openid` section.
    package struct OpenIDSettings: Sendable {
        /// Authorize requests per client network (`authorize_per_ip`).
        package var authorizePerIP = RateLimitRule(limit: 60, window: 60)
        /// Token, revocation and introspection requests per client id (`token_per_client`), counted
        /// once the client authenticated or its grant proved valid.
        package var tokenPerClient = RateLimitRule(limit: 60, window: 60)
        /// Token, revocation and introspection requests per network that failed client authentication
        /// or presented a public client's invalid grant (`failures_per_ip`).
        package var failuresPerIP = RateLimitRule(limit: 30, window: 60)
        /// Creates the defaults.
        package init() {}
    }

    /// API keys (contract §6): the `api_keys` section.
    package struct APIKeySettings: Sendable {
        /// Lifetime of an access token from an exchange, seconds (`access_ttl`).
        package var accessTTL: Int = 300
        /// Keys one user may hold (`max_per_user`).
        package var maxPerUser: Int = 50
        /// Exchanges per client network (`exchanges_per_ip`), whatever key they present.
        package var exchangesPerIP = RateLimitRule(limit: 120, window: 60)
        /// Exchanges per key (`exchanges_per_key`).
        package var exchangesPerKey = RateLimitRule(limit: 30, window: 60)
        /// Creates the defaults.
        package init() {}
    }

    /// How mail is delivered.
    package struct MailSettings: Sendable {
        /// `log`, `outbox`, `smtp` or `sendmail`.
        package var transport: String = "log"
        /// The `From` header.
        package var from: String = "authd <no-reply@localhost>"
        /// The app's name in mail (`product_name`).
        package var productName: String = "authd"
        /// `mail.smtp`, required with the `smtp` transport.
        package var smtp: SMTPSettings?
        /// `mail.sendmail.path`.
        package var sendmailPath: String = "/usr/sbin/sendmail"
        /// Delivery attempts before a message is given up (`max_attempts`).
        package var maxAttempts: Int = 5
        /// Delay after the first failed attempt, doubling after each further one (`retry_delay`, seconds).
        package var retryDelay: Int = 30
        /// How long an HTTP answer waits for the first delivery attempt (`wait_for_delivery`, seconds; 0 to 10).
        package var waitForDelivery: Double = 2
        /// Creates the defaults.
        package init() {}
    }

    /// Where the store lives: the data folder's journal (default) or a PostgreSQL database.
    package struct StorageSettings: Sendable {
        /// `file` (the data folder's journal and snapshot) or `postgres`.
        package var backend: String = "file"
        /// Journal size in bytes past which a new snapshot is written and the journal started afresh.
        package var compactAfterBytes: Int = 64 * 1024 * 1024
        /// `storage.postgres`, when the backend is `postgres`.
        package var postgres: PostgresSettings?
        /// Creates the defaults.
        package init() {}
    }

    /// `storage.postgres`: how to reach the database several instances share.
    package struct PostgresSettings: Sendable {
        /// `postgres://user:password@host:port/database`; from `url`, or read from `url_file` (so the
        /// password stays out of the configuration file).
        package var url: String
        /// Connections per instance.
        package var poolSize: Int = 10
        /// Seconds a request waits for a pooled connection before it answers 503 (`acquire_timeout`).
        package var acquireTimeout: Double = 5
        /// Records each instance keeps in memory: users, sessions, codes (`cache_size`).
        package var cacheSize: Int = 50_000
        /// Seconds a cached record may answer a read after it was loaded (`cache_max_age`).
        package var cacheMaxAge: Double = 5
        /// As libpq's `sslmode`: `disable`, `prefer` (TLS when the server offers it, unverified), `require`
        /// (TLS, unverified) or `verify-full` (TLS, the certificate and host name verified).
        package var tls: String = "prefer"
        /// Extra PEM certificates to trust for the database's certificate (a private CA).
        package var caFile: String?
        /// File holding the 32-byte key-encryption key (64 hex digits) that seals the signing keys and
        /// server secrets kept in the database; every instance needs the same one. Or the
        /// `AUTHD_KEY_ENCRYPTION_KEY` environment variable.
        package var keyEncryptionKeyFile: String?
        /// Creates settings.
        package init(url: String) { self.url = url }
    }

    /// The keys that themselves end in `_file`: `AUTHD_…_FILE` sets these verbatim rather than
    /// reading a file for the key without the suffix (contract §14).
    package static let fileKeys: Set<String> = [
        "storage.postgres.url_file", "storage.postgres.ca_file", "storage.postgres.key_encryption_key_file", "mail.smtp.password_file",
        "mail.smtp.ca_file", "http.tls.cert_file", "http.tls.key_file", "push.apns.ca_file",
    ]

    /// The storage backends this build has.
    package static let storageBackends = ["file", "postgres"]

    /// Mail transports this build can deliver with.
    package static let mailTransports = ["log", "outbox", "smtp", "sendmail"]

    /// The configuration with every default, for `host:port`.
    package static func defaults(
        host: String = "127.0.0.1", port: Int = 8080, availableProviders: [String], defaultProviders: [String]? = nil
    ) -> AuthConfig {
        // Empty input cannot fail to parse.
        try! parse(Data("{}".utf8), host: host, port: port, availableProviders: availableProviders, defaultProviders: defaultProviders)
    }

    /// Parses the configuration file.
    /// - Parameters:
    ///   - data: the file's bytes (JSON object).
    ///   - availableProviders: ids of the providers this build contains.
    ///   - defaultProviders: the ones started when `providers` is not set (default: all available).
    ///   - sectionNames: a provider's configuration section, where it is not named by its id.
    ///   - environment: the `AUTHD_*` variables over the file (contract §14), which also records
    ///     where each value came from.
    /// - Throws: ``ConfigError`` naming the first bad or unknown key (and the variable that set it).
    package static func parse(
        _ data: Data, host: String, port: Int, availableProviders: [String], defaultProviders: [String]? = nil,
        sectionNames: [String: String] = [:], environment: ConfigEnvironment? = nil
    ) throws -> AuthConfig {
        do {
            var config = try parseLayers(
                data, host: host, port: port, availableProviders: availableProviders, defaultProviders: defaultProviders, sectionNames: sectionNames,
                environment: environment)
            config.environment = environment
            return config
        } catch let error as ConfigError {
            guard let environment, !error.message.contains("AUTHD_"), let variable = environment.variable(mentionedIn: error.message) else { throw error }
            throw ConfigError("\(error.message) (set by \(variable.name))")
        }
    }

    private static func parseLayers(
        _ data: Data, host: String, port: Int, availableProviders: [String], defaultProviders: [String]?,
        sectionNames: [String: String], environment: ConfigEnvironment?
    ) throws -> AuthConfig {
        let root: [String: JSONValue]
        do {
            guard case .object(let o) = try JSONDecoder().decode(JSONValue.self, from: data) else {
                throw ConfigError("the configuration file must hold a JSON object")
            }
            root = o
        } catch let error as ConfigError {
            throw error
        } catch {
            throw ConfigError("the configuration file is not valid JSON: \(error.localizedDescription)")
        }
        var top = ConfigSection(path: "", values: root)
        top.environment = environment

        let defaultIssuer = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        let issuer = try top.string("issuer", default: defaultIssuer)
        guard let url = URL(string: issuer), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigError("issuer must be an http or https URL, not \"\(issuer)\"")
        }
        let audience = try top.string("audience", default: "authd")
        guard !audience.isEmpty else { throw ConfigError("audience must not be empty") }

        let providers = try top.strings("providers", default: defaultProviders ?? availableProviders)
        for id in providers where !availableProviders.contains(id) {
            throw ConfigError("providers lists \"\(id)\", which this build does not have (available: \(availableProviders.joined(separator: ", ")))")
        }
        if Set(providers).count != providers.count { throw ConfigError("providers lists a provider twice") }

        var tokens = TokenSettings()
        var t = try top.section("tokens")
        tokens.accessTTL = try t.seconds("access_ttl", default: tokens.accessTTL, max: 86_400)
        tokens.refreshTTL = try t.seconds("refresh_ttl", default: tokens.refreshTTL)
        tokens.refreshReuseGrace = try t.int("refresh_reuse_grace", default: tokens.refreshReuseGrace, in: 0...300)
        tokens.refreshRate = try t.rule("refresh_rate", default: tokens.refreshRate)
        let claims = try t.strings("claims", default: [])
        if let unknown = claims.first(where: { !["email", "email_verified"].contains($0) }) {
            throw ConfigError("tokens.claims may list \"email\" and \"email_verified\", not \"\(unknown)\"")
        }
        tokens.claims = Set(claims)
        tokens.clockSkew = try t.int("clock_skew", default: tokens.clockSkew, in: 0...300)
        try t.rejectUnknownKeys()
        var k = try top.section("api_keys")
        tokens.apiKeys.accessTTL = try k.seconds("access_ttl", default: tokens.apiKeys.accessTTL, max: 86_400)
        tokens.apiKeys.maxPerUser = try k.int("max_per_user", default: tokens.apiKeys.maxPerUser, in: 1...10_000)
        tokens.apiKeys.exchangesPerIP = try k.rule("exchanges_per_ip", default: tokens.apiKeys.exchangesPerIP)
        tokens.apiKeys.exchangesPerKey = try k.rule("exchanges_per_key", default: tokens.apiKeys.exchangesPerKey)
        try k.rejectUnknownKeys()

        var mail = MailSettings()
        var m = try top.section("mail")
        mail.transport = try m.string("transport", default: mail.transport)
        guard mailTransports.contains(mail.transport) else {
            throw ConfigError("mail.transport must be one of \(mailTransports.joined(separator: ", ")), not \"\(mail.transport)\"")
        }
        mail.from = try m.string("from", default: mail.from)
        do { _ = try MailAddress(parsing: mail.from, field: "From") } catch {
            throw ConfigError("mail.from must be one address, e.g. \"App <no-reply@example.com>\"")
        }
        mail.productName = try m.string("product_name", default: mail.productName)
        guard !mail.productName.contains(where: { $0.isNewline }) else { throw ConfigError("mail.product_name must be one line") }
        mail.maxAttempts = try m.int("max_attempts", default: mail.maxAttempts, in: 1...50)
        mail.retryDelay = try m.seconds("retry_delay", default: mail.retryDelay, max: 86_400)
        mail.waitForDelivery = Double(try m.int("wait_for_delivery_ms", default: Int(mail.waitForDelivery * 1000), in: 0...10_000)) / 1000
        var smtp = try m.section("smtp")
        if mail.transport == "smtp" || !smtp.isEmpty {
            mail.smtp = try Self.parseSMTP(&smtp, required: mail.transport == "smtp")
        }
        var sendmail = try m.section("sendmail")
        mail.sendmailPath = try sendmail.string("path", default: mail.sendmailPath)
        try sendmail.rejectUnknownKeys()
        try m.rejectUnknownKeys()

        var storage = StorageSettings()
        var s = try top.section("storage")
        storage.compactAfterBytes = try s.int("compact_after_bytes", default: storage.compactAfterBytes, in: 4096...(1 << 40))
        storage.backend = try s.string("backend", default: "file")
        guard storageBackends.contains(storage.backend) else {
            throw ConfigError("storage.backend must be one of \(storageBackends.joined(separator: ", ")), not \"\(storage.backend)\"")
        }
        var pg = try s.section("postgres")
        if storage.backend == "postgres" || !pg.isEmpty {
            let url: String
            switch (try pg.optionalString("url"), try pg.optionalString("url_file")) {
            case (let u?, nil): url = u
            case (nil, let file?):
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                    throw ConfigError("storage.postgres.url_file: cannot read \(file)")
                }
                url = text.trimmingCharacters(in: .whitespacesAndNewlines)
            case (nil, nil): throw ConfigError("storage.postgres needs url or url_file")
            case (_?, _?): throw ConfigError("storage.postgres: give url or url_file, not both")
            }
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw ConfigError("storage.postgres.url must start with postgres://")
            }
            var settings = PostgresSettings(url: url)
            settings.poolSize = try pg.int("pool_size", default: settings.poolSize, in: 1...1000)
            settings.acquireTimeout = Double(try pg.int("acquire_timeout", default: Int(settings.acquireTimeout), in: 1...300))
            settings.cacheSize = try pg.int("cache_size", default: settings.cacheSize, in: 0...10_000_000)
            settings.cacheMaxAge = Double(try pg.int("cache_max_age", default: Int(settings.cacheMaxAge), in: 0...3600))
            settings.tls = try pg.string("tls", default: settings.tls)
            guard ["disable", "prefer", "require", "verify-full"].contains(settings.tls) else {
                throw ConfigError("storage.postgres.tls must be disable, prefer, require or verify-full, not \"\(settings.tls)\"")
            }
            settings.caFile = try pg.optionalString("ca_file")
            if let caFile = settings.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                throw ConfigError("storage.postgres.ca_file: cannot read \(caFile)")
            }
            settings.keyEncryptionKeyFile = try pg.optionalString("key_encryption_key_file")
            try pg.rejectUnknownKeys()
            // Instances behind one load balancer must issue tokens every one of them accepts; the default
            // issuer is this instance's own host:port.
            if storage.backend == "postgres", !top.contains("issuer") {
                throw ConfigError("storage.backend postgres needs issuer set explicitly (the same public URL on every instance)")
            }
            storage.postgres = settings
        }
        try s.rejectUnknownKeys()

        var http = try top.section("http")
        let idleTimeout = try http.seconds("idle_timeout", default: 60, max: 3600)
        let trustedProxies = try TrustedProxies(try http.strings("trusted_proxies", default: []))
        let shutdownTimeout = try http.seconds("shutdown_timeout", default: 10, max: 300)
        let requestTimeout = try http.seconds("request_timeout", default: 30, max: 3600)
        guard requestTimeout >= 1 else { throw ConfigError("http.request_timeout must be at least 1 second") }
        let maxConnections = try http.int("max_connections", default: 4096, in: 1...1_000_000)
        let maxConnectionsPerClient = try http.int("max_connections_per_client", default: 256, in: 1...1_000_000)
        var tlsSection = try http.section("tls")
        var tls: TLSFiles?
        if !tlsSection.isEmpty {
            guard let cert = try tlsSection.optionalString("cert_file"), let key = try tlsSection.optionalString("key_file") else {
                throw ConfigError("http.tls needs cert_file and key_file (PEM)")
            }
            for (name, file) in [("cert_file", cert), ("key_file", key)] where !FileManager.default.isReadableFile(atPath: file) {
                throw ConfigError("http.tls.\(name): cannot read \(file)")
            }
            try tlsSection.rejectUnknownKeys()
            tls = TLSFiles(certificateFile: cert, keyFile: key)
        }
        let unixSocket = try http.optionalString("unix_socket")
        if let unixSocket, unixSocket.isEmpty || unixSocket.utf8.count > 100 {
            throw ConfigError("http.unix_socket must be a path of at most 100 bytes")
        }
        let tcp = try http.bool("tcp", default: true)
        guard tcp || unixSocket != nil else { throw ConfigError("http.tcp false needs http.unix_socket: authd would listen nowhere") }
        try http.rejectUnknownKeys()

        var device = DeviceSettings()
        var d = try top.section("device")
        device.codeTTL = try d.seconds("code_ttl", default: device.codeTTL, max: 3600)
        guard device.codeTTL >= 5 else { throw ConfigError("device.code_ttl must be at least 5 seconds") }
        device.interval = try d.int("interval", default: device.interval, in: 1...60)
        device.verificationURI = try d.optionalString("verification_uri")
        if let uri = device.verificationURI, !(uri.hasPrefix("https://") || uri.hasPrefix("http://")) || uri.contains(where: { $0.isWhitespace || $0 == "?" || $0 == "#" }) {
            throw ConfigError("device.verification_uri must be an http(s) URL without a query, e.g. \"https://auth.example.com/device\"")
        }
        device.startsPerIP = try d.rule("starts_per_ip", default: device.startsPerIP)
        device.lookupsPerSession = try d.rule("lookups_per_session", default: device.lookupsPerSession)
        device.lookupsPerIP = try d.rule("lookups_per_ip", default: device.lookupsPerIP)
        try d.rejectUnknownKeys()

        var openID = OpenIDSettings()
        var o = try top.section("openid")
        openID.authorizePerIP = try o.rule("authorize_per_ip", default: openID.authorizePerIP)
        openID.tokenPerClient = try o.rule("token_per_client", default: openID.tokenPerClient)
        openID.failuresPerIP = try o.rule("failures_per_ip", default: openID.failuresPerIP)
        try o.rejectUnknownKeys()

        var signup = SignupSettings()
        var su = try top.section("signup")
        let modeName = try su.string("mode", default: "open")
        guard let mode = SignupPolicy.Mode(rawValue: modeName) else {
            throw ConfigError("signup.mode must be open, invite or domains, not \"\(modeName)\"")
        }
        signup.mode = mode
        signup.domains = try su.strings("domains", default: []).map { $0.lowercased() }
        for domain in signup.domains where domain.isEmpty || domain.hasPrefix(".") || domain.contains("@") || domain.contains(where: \.isWhitespace) {
            throw ConfigError("signup.domains holds domain names such as \"example.com\", not \"\(domain)\"")
        }
        if mode == .domains, signup.domains.isEmpty { throw ConfigError("signup.mode domains needs signup.domains, e.g. [\"example.com\"]") }
        signup.anonymous = try su.bool("anonymous", default: mode == .open)
        try su.rejectUnknownKeys()

        var console = try top.section("console")
        let consoleEnabled = try console.bool("enabled", default: true)
        try console.rejectUnknownKeys()

        var auth = try top.section("auth")
        let freshAuth = try auth.seconds("fresh_auth", default: 600, max: 86_400)
        try auth.rejectUnknownKeys()

        var log = LogSettings()
        var l = try top.section("log")
        log.format = try l.string("format", default: log.format)
        guard ["text", "json"].contains(log.format) else { throw ConfigError("log.format must be text or json, not \"\(log.format)\"") }
        log.level = try l.optionalString("level")
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        if let level = log.level, !levels.contains(level) {
            throw ConfigError("log.level must be one of \(levels.joined(separator: ", ")), not \"\(level)\"")
        }
        try l.rejectUnknownKeys()

        var m2 = try top.section("metrics")
        var metricsListen: (host: String, port: Int)?
        if let listen = try m2.optionalString("listen") {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
                throw ConfigError("metrics.listen must be HOST:PORT, e.g. \"127.0.0.1:9464\", not \"\(listen)\"")
            }
            var host = String(listen[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            metricsListen = (host, port)
        }
        try m2.rejectUnknownKeys()

        var audit = AuditSettings()
        var a = try top.section("audit")
        audit.maxBytes = try a.int("max_bytes", default: audit.maxBytes, in: 4096...(1 << 40))
        audit.keep = try a.int("keep", default: audit.keep, in: 0...1000)
        try a.rejectUnknownKeys()

        let webhooks = try WebhookSettings(&top)
        let push = try PushSettings(&top)

        var sections: [String: ConfigSection] = [:]
        for id in availableProviders {
            sections[id] = try top.section(sectionNames[id] ?? id)
        }
        try top.rejectUnknownKeys()

        var config = AuthConfig(
            issuer: issuer, audience: audience, providers: providers, tokens: tokens, mail: mail,
            storage: storage, providerSections: sections
        )
        config.issuerIsDefault = !top.contains("issuer")
        // Served over HTTPS by authd itself: the default issuer says so.
        if config.issuerIsDefault, tls != nil, config.issuer.hasPrefix("http://") { config.issuer = "https://" + config.issuer.dropFirst(7) }
        config.idleTimeout = idleTimeout
        config.requestTimeout = requestTimeout
        config.maxConnections = maxConnections
        config.maxConnectionsPerClient = maxConnectionsPerClient
        config.tls = tls
        config.unixSocket = unixSocket
        config.tcp = tcp
        config.freshAuth = freshAuth
        config.consoleEnabled = consoleEnabled
        config.device = device
        config.openID = openID
        config.signup = signup
        config.webhooks = webhooks
        config.push = push
        config.trustedProxies = trustedProxies
        config.shutdownTimeout = shutdownTimeout
        config.log = log
        config.audit = audit
        config.metricsListen = metricsListen
        return config
    }
}

extension AuthConfig {
    static func parseSMTP(_ s: inout ConfigSection, required: Bool) throws -> SMTPSettings? {
        guard let host = try s.optionalString("host"), !host.isEmpty else {
            if required { throw ConfigError("mail.smtp.host is required with the smtp transport") }
            try s.rejectUnknownKeys()
            return nil
        }
        let securityName = try s.string("security", default: "starttls")
        guard let security = SMTPSettings.Security(rawValue: securityName) else {
            throw ConfigError("mail.smtp.security must be starttls, tls or none, not \"\(securityName)\"")
        }
        if security == .none, !["127.0.0.1", "::1", "localhost"].contains(host.lowercased()) {
            throw ConfigError("mail.smtp.security none is allowed only for a relay on the loopback interface (127.0.0.1, ::1, localhost)")
        }
        let defaultPort = switch security { case .starttls: 587; case .tls: 465; case .none: 25 }
        var password = try s.optionalString("password")
        if let file = try s.optionalString("password_file") {
            guard password == nil else { throw ConfigError("mail.smtp: set password or password_file, not both") }
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw ConfigError("mail.smtp.password_file: cannot read \(file)") }
            password = text.trimmingCharacters(in: .newlines)
        }
        let caFile = try s.optionalString("ca_file")
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) { throw ConfigError("mail.smtp.ca_file: cannot read \(caFile)") }
        let settings = SMTPSettings(
            host: host, port: try s.int("port", default: defaultPort, in: 1...65_535), security: security,
            username: try s.optionalString("username"), password: password,
            helo: try s.string("helo", default: ProcessInfo.processInfo.hostName.isEmpty ? "localhost" : ProcessInfo.processInfo.hostName),
            caFile: caFile, timeout: try s.seconds("timeout", default: 30, max: 600)
        )
        if (settings.username == nil) != (settings.password == nil) {
            throw ConfigError("mail.smtp: username and password (or password_file) go together")
        }
        try s.rejectUnknownKeys()
        return settings
    }
}

