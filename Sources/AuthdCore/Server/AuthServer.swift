package import AuthKernel
package import FileStore
package import AuthStorage
import Foundation
#if canImport(Glibc)
import Glibc
#endif
package import Hummingbird
import HummingbirdCore
package import Logging
import NIOCore
package import ServiceLifecycle
import UnixSignals

/// A ready-to-run authd: the store opened, keys loaded, kernel services and providers wired, routes mounted.
///
/// ```swift
/// let server = try await AuthServer.make(options, registry: ProviderRegistry([EmailProvider.self]))
/// try await server.run()   // until SIGINT/SIGTERM; then the store is flushed and closed
/// ```
package final class AuthServer: Sendable {
    /// Everything `make` needs.
    package struct Options: Sendable {
        /// The data folder.
        package var dataFolder: String
        /// Listen address.
        package var host: String
        /// Listen port (0 picks a free one).
        package var port: Int
        /// Parsed configuration.
        package var config: AuthConfig
        /// Time source.
        package var clock: any AuthClock = SystemClock()
        /// Server logger.
        package var logger: Logger
        /// A store opened by the caller (a database backend); nil opens the data folder's ``JournalStore``.
        /// The server owns it from here: it closes it when it stops, or when `make` fails.
        package var store: (any AuthStore)?
        /// Where rate-limit counters live; nil keeps them in memory (one instance).
        package var rateLimitCounters: (any RateLimitCounters)?
        /// Where the signing keys and server secrets live; nil uses `DATA/keys/`.
        package var keys: (any ServerKeys)?
        /// Where decoy accounts live; nil keeps them in memory (one instance).
        package var decoyRecords: (any DecoyRecordStore)?
        /// News from other instances sharing the store (new approval requests, rotated keys); nil when alone.
        package var cluster: (any ClusterEvents)?
        /// Disk fault injection, for tests.
        package var faults: StoreFaults?
        /// Whether to serve admin commands on `DATA/admin.sock` (off when the CLI opens the folder itself).
        package var adminSocket = true
        /// More services to run with the server (the executable's SIGHUP handler).
        package var extraServices: [any Service] = []
        /// Renders the metrics in Prometheus text format, served at `metrics.listen`; the executable
        /// sets it after bootstrapping swift-metrics with a Prometheus backend.
        package var metricsExposition: (@Sendable () -> [UInt8])?
        /// Serves `http.tls`; nil in a server built without TLS (the core, the test kit), which then
        /// refuses a configuration that sets it. `AuthdServer` provides NIOSSL with HTTP/2.
        package var tls: (@Sendable (AuthConfig.TLSFiles) throws -> any TLSTermination)?
        /// Delivers `push.apns`; nil in a server built without it, which then refuses a configuration
        /// that sets it. `AuthdServer` provides APNs over HTTP/2.
        package var push: (@Sendable (PushSettings.APNs) async throws -> any PushDelivery)?
        /// Sends `mail.transport = smtp`; nil in a server built without it, which then refuses a
        /// configuration that asks for it. `AuthdServer` provides SMTP with STARTTLS or TLS (NIOSSL).
        package var smtp: (@Sendable (SMTPSettings) -> any MailTransport)?
        /// The OpenID Provider's RS256 key, from the server's keys; nil in a server built without it
        /// (ID tokens are then EdDSA only). `AuthdServer` provides it.
        package var rsa: (@Sendable (any ServerKeys, Logger) async throws -> any RSASigning)?
        /// `authd import-users`; nil in a server built without it. `AuthdServer` provides it.
        package var importUsers: UserImporter?
        /// Outbound HTTP for providers (`kernel.http`) and webhook deliveries; none by default (every
        /// request fails). `AuthdServer` provides AsyncHTTPClient.
        package var http: any OutboundHTTP = NoOutboundHTTP()
        /// Called once the server listens, with the API's bound address as a URL (`http://127.0.0.1:8080`):
        /// after every listener (the API, and the metrics listener and admin socket when on) accepts connections.
        package var onServerRunning: @Sendable (_ url: String) async -> Void = { _ in }

        /// Creates options.
        package init(dataFolder: String, host: String = "127.0.0.1", port: Int = 8080, config: AuthConfig, logger: Logger) {
            self.dataFolder = dataFolder
            self.host = host
            self.port = port
            self.config = config
            self.logger = logger
        }
    }

    /// The kernel services.
    package let kernel: Kernel
    /// The store.
    package let store: any AuthStore
    /// The signing keys.
    package let keyRing: SigningKeyRing
    /// The other instances sharing the store, if any.
    package let cluster: (any ClusterEvents)?
    /// The Hummingbird application.
    package let application: Application<RouterResponder<AuthRequestContext>>
    /// Every route served, as `METHOD /path` (the spec test compares them with docs/openapi.yaml).
    package let routes: [String]
    /// The providers started, in `providers` order (tests count the work they do).
    package let providers: [any AuthProvider]
    /// The HTTPS certificate, when authd serves TLS itself.
    let certificates: (any TLSTermination)?
    /// Makes the SMTP transport, when this server has one (a reload may switch to it).
    let smtp: (@Sendable (SMTPSettings) -> any MailTransport)?
    /// Imports users, when this server can.
    package let importUsers: UserImporter?
    /// The OpenID Provider's RSA keys, when this server has them.
    package let rsa: (any RSASigning)?

    private init(
        kernel: Kernel, store: any AuthStore, keyRing: SigningKeyRing, cluster: (any ClusterEvents)?, application: Application<RouterResponder<AuthRequestContext>>, routes: [String],
        providers: [any AuthProvider], certificates: (any TLSTermination)?, smtp: (@Sendable (SMTPSettings) -> any MailTransport)?,
        importUsers: UserImporter?, rsa: (any RSASigning)?
    ) {
        self.rsa = rsa
        self.certificates = certificates
        self.smtp = smtp
        self.importUsers = importUsers
        self.kernel = kernel
        self.store = store
        self.keyRing = keyRing
        self.cluster = cluster
        self.application = application
        self.routes = routes
        self.providers = providers
    }

    /// Opens the data folder and builds the server.
    /// - Throws: ``StoreError`` (folder locked, corrupt journal), ``ConfigError`` (bad provider settings, bad key files).
    package static func make(_ options: Options, registry: ProviderRegistry) async throws -> AuthServer {
        let logger = options.logger
        var configured = options.config
        // What any provider of this build declares secret is hidden wherever the configuration is shown.
        configured.secrets = ConfigSecrets(providers: registry.types)
        let config = configured
        let clock = options.clock
        let store: any AuthStore
        if let given = options.store {
            store = given
        } else {
            let journal = try await JournalStore.open(
                folder: options.dataFolder, compactAfterBytes: config.storage.compactAfterBytes, faults: options.faults, logger: logger
            )
            if journal.loadReport.replayedLines > 0 || journal.loadReport.droppedTornLine {
                logger.info("store recovered from journal", metadata: ["store.replayed": "\(journal.loadReport.replayedLines)"])
            }
            store = journal
        }
        do {
            // Private whatever the backend: with PostgreSQL nothing else creates it, and the admin
            // socket, the audit log and the outbox live here.
            try DurableFile.makeDirectory(options.dataFolder, mode: 0o700)
            let keys: any ServerKeys = try options.keys ?? KeyFolder(dataFolder: options.dataFolder)
            // A retired key verifies until its last token has expired, clock skew included.
            let keyRing = SigningKeyRing(
                keys: try await keys.loadOrCreateSigningKeys(now: clock.now(), logger: logger), accessTTL: config.tokens.accessTTL + config.tokens.clockSkew
            )
            let codeSecret = try keys.loadOrCreateSecret(named: "code-secret", logger: logger)

            let rateLimiter = RateLimiter(clock: clock, counters: options.rateLimitCounters ?? MemoryRateLimitCounters())
            let transport = try Self.transport(config.mail, dataFolder: options.dataFolder, smtp: options.smtp, logger: logger)
            let jobs = JobQueue(store: store, clock: clock, logger: logger)
            let messages = Messages(folder: options.dataFolder + "/locales")
            try messages.register(ServerCatalogs.declarations, owner: "authd", prefix: nil)
            let mailer = Mailer(
                transport: transport, from: config.mail.from,
                templates: MailTemplates(folder: options.dataFolder + "/templates", productName: config.mail.productName, messages: messages, logger: logger),
                jobs: jobs,
                box: try SecretBox(key: try keys.loadOrCreateSecret(named: "mail-queue", logger: logger)),
                retry: .init(maxAttempts: config.mail.maxAttempts, baseDelay: config.mail.retryDelay),
                waitForDelivery: .milliseconds(Int64(config.mail.waitForDelivery * 1000)), logger: logger
            )
            let audit = AuditLog(folder: options.dataFolder, settings: config.audit, clock: clock, logger: logger)
            let issuerName = IssuerName(config.issuer)
            let events = AccountEvents()
            var sessions = SessionService(
                store: store, issuer: AccessTokenIssuer(keyRing: keyRing),
                verifier: AccessTokenVerifier(keyRing: keyRing, issuer: issuerName, audience: config.audience, clockSkew: config.tokens.clockSkew),
                settings: config.tokens, rateLimiter: rateLimiter, clock: clock, logger: logger, audit: audit, freshAuth: config.freshAuth,
                hooks: SignInHooks(), events: events
            )
            let appsForSessions = OpenIDClients(store: store, clock: clock, audience: config.audience)
            sessions.appGroups = { id in try await appsForSessions.find(id)?.allowedGroups }
            sessions.networkBox = try SecretBox(key: try keys.loadOrCreateSecret(named: "session-network", logger: logger))
            let notices = SignInMethodNotices(
                mailer: mailer, clock: clock, logger: logger, names: registry.methodNames,
                tokens: SingleUseTokens(store: store, secret: codeSecret, clock: clock), issuer: { issuerName.value })
            let kernel = Kernel(
                config: config, users: UserService(store: store, clock: clock, logger: logger, notices: notices, freshAuth: config.freshAuth, events: events),
                sessions: sessions,
                codes: OneTimeCodeService(store: store, secret: codeSecret, clock: clock),
                approvals: ApprovalService(store: store, secret: codeSecret, clock: clock, logger: logger, cluster: options.cluster, events: events, jobs: jobs),
                jobs: jobs, accountDeletion: AccountDeletionHooks(), rateLimiter: rateLimiter,
                mailer: mailer, clock: clock, logger: logger,
                audit: audit, decoyRecords: options.decoyRecords, keys: keys, http: options.http
            )
            var webhookDispatcher: WebhookDispatcher?
            if !config.webhooks.endpoints.isEmpty {
                let webhooks = WebhookDispatcher(settings: config.webhooks, jobs: jobs, clock: clock, logger: logger, http: options.http)
                events.onEvent { type, data in await webhooks.enqueue(type, data) }
                webhookDispatcher = webhooks
            }
            let providers = try registry.instantiate(kernel: kernel)
            // Read last, so an operator's entries replace the shipped ones of every catalog.
            try messages.loadOperatorCatalogs()

            let router = Router(context: AuthRequestContext.self)
            let routeTable = RouteTable()
            router.add(middleware: RequestInfoMiddleware(proxies: config.trustedProxies, messages: messages))
            let metrics = config.metricsListen.flatMap { listen in options.metricsExposition.map { (listen, $0) } }
            // Requests by route and status, and their latency; only when someone collects them.
            if metrics != nil { router.add(middleware: HTTPMetricsMiddleware()) }
            router.add(middleware: ClientCORSMiddleware(clients: OpenIDClients(store: store, clock: clock, audience: config.audience)))
            router.add(middleware: ErrorRenderingMiddleware(routes: routeTable))
            // Per-request lines at debug: at thousands of requests a second an info line each is the bottleneck.
            router.add(middleware: LogRequestsMiddleware(.debug, includeHeaders: .none))
            let api = router.group("api/v1/auth").add(middleware: BearerAuthenticator(sessions: sessions))
            let openAPI: String
            do { openAPI = try OpenAPIDocument.assemble(providers: registry.types(started: config.providers)) } catch { throw ConfigError("\(error)") }
            let rsa = try await options.rsa?(keys, logger)
            KernelRoutes(kernel: kernel, keyRing: keyRing, providerIDs: config.providers, openAPI: openAPI, rsa: rsa).add(to: router, api: api)
            ApprovalRoutes(kernel: kernel).add(to: api)
            SecondFactorRoutes(kernel: kernel).add(to: api)
            APIKeyRoutes(kernel: kernel).add(to: api)
            let clientsForDevices = OpenIDClients(store: store, clock: clock, audience: config.audience)
            let devices = DeviceAuthorizations(
                store: store, sessions: sessions, clock: clock, logger: logger, audit: audit, settings: config.device,
                rateLimiter: kernel.rateLimiter, clientAccess: { id, user in try await clientsForDevices.find(id)?.admits(user) ?? true })
            DeviceRoutes(kernel: kernel, devices: devices).add(to: api)
            let serviceKeys = ServiceKeys(store: store, clock: clock)
            AdminAPIRoutes(kernel: kernel, serviceKeys: serviceKeys).add(to: router)
            ClientAdminRoutes(kernel: kernel, serviceKeys: serviceKeys, clients: OpenIDClients(store: store, clock: clock, audience: config.audience))
                .add(to: router)
            let gate = PageGate(issuer: issuerName)
            let pageProviders = providers.compactMap { $0 as? any PageSignIn }
            let renderer: PageRenderer
            do { renderer = try PageRenderer(providers: pageProviders, productName: config.mail.productName, messages: messages) } catch { throw error }
            let login = LoginRoutes(
                kernel: kernel, gate: gate, renderer: renderer, providers: pageProviders, box: try SecretBox(key: kernel.secret(named: "pages")),
                csrfKey: try kernel.secret(named: "pages-csrf"), clients: OpenIDClients(store: store, clock: clock, audience: config.audience))
            login.add(to: router)
            try NotMeRoutes.registerMail(on: mailer)
            NotMeRoutes(kernel: kernel, renderer: renderer, login: login).add(to: router)
            let openID = OpenIDRoutes(
                kernel: kernel, clients: OpenIDClients(store: store, clock: clock, audience: config.audience),
                codes: AuthorizationCodes(store: store, clock: clock), consents: ConsentGrants(store: store, clock: clock),
                tokens: OpenIDTokens(keyRing: keyRing, rsa: rsa, issuer: issuerName, clock: clock), issuer: issuerName, renderer: renderer, login: login,
                box: try SecretBox(key: kernel.secret(named: "oidc-requests")))
            openID.add(to: router)
            // Consent stays through a reset or a disable, not through a deletion (contract §13).
            kernel.accountDeletion.register { user in try? await openID.consents.forgetAll(of: user.id) }
            AccountRoutes(kernel: kernel, gate: gate, renderer: renderer, login: login, openID: openID).add(to: router)
            DevicePage(kernel: kernel, devices: devices, renderer: renderer, login: login).add(to: router)
            InvitationRoutes(kernel: kernel, renderer: renderer, login: login).add(to: router)
            let operators = Operators(store: store, clock: clock)
            if config.consoleEnabled {
                ConsoleRoutes(
                    kernel: kernel, renderer: renderer, login: login, operators: operators,
                    overview: ConsoleOverview(kernel: kernel, store: store, auditPath: audit.path), administration: UserAdministration(kernel: kernel),
                    factorProviders: pageProviders.filter { ["passkey", "totp"].contains(type(of: $0).id) }, store: store,
                    openIDClients: OpenIDClients(store: store, clock: clock, audience: config.audience), serviceKeys: serviceKeys,
                    webhookSettings: config.webhooks, recentDeliveries: webhookDispatcher?.recent, auditPath: audit.path
                ).add(to: router)
            }
            // A deleted operator's role goes with the account.
            kernel.accountDeletion.register { user in _ = try? await operators.revoke(user.id) }
            // An operator's account is never joined by another provider's email alone (contract §16).
            kernel.protectedAccounts.register { try await operators.isOperator($0) }
            OAuthRoutes(kernel: kernel, devices: devices, issuer: issuerName, serviceKeys: serviceKeys, openID: openID).add(to: router)
            for provider in providers {
                api.addRoutes(provider.routes())
                router.addRoutes(provider.rootRoutes())
            }
            let pushRegistrations = PushRegistrations(store: store, clock: clock)
            PushRoutes(registrations: pushRegistrations, topics: config.push.apns?.topics ?? []).add(to: api)
            kernel.accountDeletion.register { user in try? await pushRegistrations.removeAll(userID: user.id) }
            var apnsClient: (any PushDelivery)?
            if let apns = config.push.apns {
                guard let push = options.push else { throw ConfigError("push.apns: this server is built without push delivery (AuthdServer has it)") }
                let client: any PushDelivery
                do { client = try await push(apns) } catch { throw ConfigError("push.apns: \(error)") }
                apnsClient = client
                let pushes = ApprovalPushes(
                    apns: client, registrations: pushRegistrations, rateLimiter: rateLimiter, clock: clock, logger: logger, defaultTopic: apns.topics[0],
                    approvals: kernel.approvals)
                // Off the request's path: APNs may be slow, and the approval is stored already.
                events.onEvent { type, data in
                    if type == "approval.requested" { Task { await pushes.approvalRequested(data) } }
                }
            }

            // Order matters at shutdown: services stop in reverse, so the store closes after the HTTP
            // server has finished its in-flight requests.
            var services: [any Service] =
                [StoreClosingService(store: store, audit: audit), ExpiryPurgeService(kernel: kernel), JobRunner(jobs: kernel.jobs, store: store, interval: .seconds(1))] + providers.flatMap(\.services)
            services += options.extraServices
            if let apnsClient { services.append(ShutdownAction { await apnsClient.shutdown() }) }
            if let cluster = options.cluster {
                services.append(
                    ClusterEventService(events: cluster, approvals: kernel.approvals, keys: keys, keyRing: keyRing, rsa: rsa, clock: clock, logger: logger))
            }
            let readiness = ListenerReadiness(announce: options.onServerRunning)
            readiness.expect()  // the API
            if let (listen, exposition) = metrics {
                readiness.expect()
                services.append(
                    MetricsEndpoint.service(host: listen.host, port: listen.port, exposition: exposition, logger: logger) {
                        await readiness.listening()
                    })
            }
            if options.adminSocket {
                let operations = try AdminOperations(
                    kernel: kernel, store: store, keyRing: keyRing, rsa: rsa, cluster: options.cluster, dataFolder: options.dataFolder, via: "admin socket",
                    importUsers: options.importUsers, providerTypes: providers.map { type(of: $0) })
                // Last, so it stops first, before the store closes.
                if let admin = AdminSocket.service(
                    dataFolder: options.dataFolder, operations: operations, logger: logger, onRunning: { await readiness.listening() })
                {
                    readiness.expect()
                    services.append(admin)
                }
            }
            let connectionsPerClient = ConnectionsPerClient(limit: config.maxConnectionsPerClient, proxies: config.trustedProxies)
            let certificates: (any TLSTermination)?
            if let files = config.tls {
                guard let tls = options.tls else { throw ConfigError("http.tls: this server is built without TLS (AuthdServer has it)") }
                certificates = try tls(files)
            } else {
                certificates = nil
            }
            let scheme = certificates == nil ? "http" : "https"
            // Without these an idle, half-sent or trickled request would hold its connection forever (slow-loris).
            let http1 = HTTP1Channel.Configuration(
                additionalChannelHandlers: [
                    connectionsPerClient.handler(), RequestDeadlineHandler(timeout: .seconds(Int64(config.requestTimeout))),
                ],
                idleTimeout: .seconds(Int64(config.idleTimeout)))
            let server: HTTPServerBuilder
            if let certificates {
                server = try certificates.server(idleTimeout: config.idleTimeout, http1: http1)
            } else {
                server = .http1(configuration: http1)
            }
            // `http.unix_socket` beside the TCP listener is a second listener of the same router; without TCP it is the only one.
            if config.tcp, let path = config.unixSocket {
                readiness.expect()
                services.append(
                    try Self.unixSocketListener(path: path, router: router, http1: http1, logger: logger) { await readiness.listening() })
            }
            let address: BindAddress = config.tcp ? .hostname(options.host, port: options.port) : .unixDomainSocket(path: config.unixSocket!)
            if !config.tcp { try Self.removeStaleSocket(config.unixSocket!) }
            let application = Application(
                router: router,
                server: server,
                // Beyond `http.max_connections`, new connections wait in the listen backlog; established ones go on.
                configuration: .init(
                    address: address, serverName: "authd",
                    availableConnectionsDelegate: MaximumAvailableConnections(config.maxConnections)),
                // Logged by name only: each holds what it was given (settings, keys, the configuration file).
                services: services.map(NamedService.init),
                onServerRunning: { channel in
                    // One accept per wake-up, so the connection limit is exact (NIO accepts up to 4 at a time).
                    try? await channel.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
                    if !config.tcp, let path = config.unixSocket {
                        chmod(path, 0o660)
                        await readiness.listening(apiURL: "unix:" + path)
                        return
                    }
                    let ip = channel.localAddress?.ipAddress ?? options.host
                    let port = channel.localAddress?.port ?? options.port
                    // `--port 0`: the default issuer names the port actually bound, not 0.
                    if config.issuerIsDefault, options.port != port {
                        issuerName.set("\(scheme)://\(options.host.contains(":") ? "[\(options.host)]" : options.host):\(port)")
                    }
                    await readiness.listening(apiURL: "\(scheme)://\(ip.contains(":") ? "[\(ip)]" : ip):\(port)")
                    // A fresh install: where the console is, and how its first operator is made (contract §14).
                    logger.notice(
                        "serving", metadata: ["issuer": "\(issuerName.value)", "providers": "\(config.providers.joined(separator: ","))", "mail_transport": "\(config.mail.transport)"])
                    if config.consoleEnabled, (try? await operators.list().isEmpty) == true {
                        let command = FirstStart.adminCommand("admins invite EMAIL", dataFolder: options.dataFolder)
                        logger.notice(
                            "\(FirstStart.noOperatorYet(command: command, factorProviders: config.providers.filter { ["passkey", "totp"].contains($0) }))",
                            metadata: ["console": "\(issuerName.value)/admin"])
                    }
                },
                logger: logger
            )
            routeTable.set(router.routes.map { (method: $0.method.rawValue, path: "\($0.path)") })
            let routes = router.routes.map { "\($0.method.rawValue) \($0.path)" }.sorted()
            return AuthServer(
                kernel: kernel, store: store, keyRing: keyRing, cluster: options.cluster, application: application, routes: routes,
                providers: providers, certificates: certificates, smtp: options.smtp, importUsers: options.importUsers, rsa: rsa)
        } catch {
            await store.close()
            throw error
        }
    }

    /// `http.unix_socket` beside the TCP listener: the same routes for processes on this machine, mode 0660.
    static func unixSocketListener(
        path: String, router: Router<AuthRequestContext>, http1: HTTP1Channel.Configuration, logger: Logger,
        onRunning: @escaping @Sendable () async -> Void
    ) throws -> some Service {
        try removeStaleSocket(path)
        return Application(
            router: router, server: .http1(configuration: http1),
            configuration: .init(address: .unixDomainSocket(path: path), serverName: "authd"),
            onServerRunning: { _ in
                chmod(path, 0o660)
                await onRunning()
            },
            logger: logger)
    }

    /// Removes a socket file left by a server that is gone (binding would fail on it); anything else
    /// at that path, or a socket a live server answers on, is left alone (the bind then fails).
    static func removeStaleSocket(_ path: String) throws {
        guard (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType == .typeSocket else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { _ = Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if connected != 0 { unlink(path) }
    }

    /// Serves until SIGINT or SIGTERM, then finishes in-flight requests and flushes the store.
    package func run() async throws {
        var configuration = ServiceGroupConfiguration(
            services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: kernel.logger
        )
        // In-flight requests get this long to finish (an event stream would wait forever), then are cancelled.
        configuration.maximumGracefulShutdownDuration = .seconds(kernel.config.shutdownTimeout)
        configuration.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: configuration).run()
        await store.close()
        await kernel.audit.close()
    }

    /// The mail transport `settings` name.
    static func transport(
        _ settings: AuthConfig.MailSettings, dataFolder: String, smtp: (@Sendable (SMTPSettings) -> any MailTransport)?, logger: Logger
    ) throws(ConfigError) -> any MailTransport {
        switch settings.transport {
        case "outbox": return OutboxMailTransport(path: dataFolder + "/outbox.jsonl")
        case "smtp":
            guard let smtp else { throw ConfigError("mail.transport smtp: this server is built without SMTP (AuthdServer has it)") }
            return smtp(settings.smtp!)
        case "sendmail": return SendmailTransport(path: settings.sendmailPath)
        default: return LogMailTransport(logger: logger)
        }
    }

    /// What a reload changed, and what changed in the file but waits for a restart.
    package struct ReloadReport: Sendable, Equatable {
        /// Applied now.
        package var reloaded: [String]
        /// Changed in the file, not applied: top-level keys (`issuer`, `tokens`, a provider's section…).
        package var needRestart: [String]
    }

    /// Applies a re-read configuration file (SIGHUP): mail settings and every rate limit at once
    /// (templates are read at each send anyway); other changes are reported as needing a restart.
    /// - Parameters:
    ///   - config: the new file, parsed and checked.
    ///   - root: its JSON; `previous`: the JSON it replaces.
    package func reload(config: AuthConfig, root: [String: JSONValue], previous: [String: JSONValue], dataFolder: String) async -> ReloadReport {
        var reloaded: [String] = []
        if root["mail"] != previous["mail"] {
            do {
                kernel.mailer.reconfigure(
                    transport: try Self.transport(config.mail, dataFolder: dataFolder, smtp: smtp, logger: kernel.logger), from: config.mail.from,
                    retry: .init(maxAttempts: config.mail.maxAttempts, baseDelay: config.mail.retryDelay),
                    waitForDelivery: .milliseconds(Int64(config.mail.waitForDelivery * 1000))
                )
                reloaded.append("mail")
            } catch {
                kernel.logger.error("SIGHUP: the mail settings were not applied; the old ones stay", metadata: ["error": "\(error)"])
            }
        }
        if let certificates {
            // The files again, whatever the configuration says: a renewed certificate keeps its paths.
            do {
                try certificates.reload()
                reloaded.append("TLS certificate")
            } catch {
                kernel.logger.error("SIGHUP: the TLS certificate was not reloaded; the old one stays", metadata: ["error": "\(error)"])
            }
        }
        let limitsChanged = Self.rateLimits(.object(root), path: "") != Self.rateLimits(.object(previous), path: "")
        await kernel.rateLimiter.reload(root: root, clearCounters: limitsChanged)
        if limitsChanged { reloaded.append("rate limits") }
        let keys = Set(root.keys).union(previous.keys).subtracting(["mail", "log"])
        let needRestart = keys.filter { Self.withoutRateLimits(root[$0] ?? .null) != Self.withoutRateLimits(previous[$0] ?? .null) }.sorted()
        return ReloadReport(reloaded: reloaded, needRestart: needRestart)
    }

    /// Paths of objects that look like rate-limit rules (they have `limit` or `window`) but are not
    /// valid ones; a reload refuses a file with any.
    package static func invalidRateLimits(_ root: [String: JSONValue]) -> [String] {
        func walk(_ value: JSONValue, _ path: String) -> [String] {
            guard case .object(let o) = value else { return [] }
            if o["limit"] != nil || o["window"] != nil { return RateLimitRule.parse(value) == nil ? [path] : [] }
            return o.flatMap { walk($0.value, path.isEmpty ? $0.key : "\(path).\($0.key)") }
        }
        return walk(.object(root), "").sorted()
    }

    /// The value with every rate-limit rule (`{"limit", "window"}`) taken out.
    static func withoutRateLimits(_ value: JSONValue) -> JSONValue {
        guard case .object(let o) = value else { return value }
        return .object(o.filter { RateLimitRule.parse($0.value) == nil }.mapValues(withoutRateLimits))
    }

    /// Every rate-limit rule in the value, by path.
    static func rateLimits(_ value: JSONValue, path: String) -> [String: JSONValue] {
        guard case .object(let o) = value else { return [:] }
        var found: [String: JSONValue] = [:]
        for (key, v) in o {
            let p = path.isEmpty ? key : "\(path).\(key)"
            if RateLimitRule.parse(v) != nil { found[p] = v } else { found.merge(rateLimits(v, path: p)) { a, _ in a } }
        }
        return found
    }

    /// Closes the store (idempotent); for tests that drive ``application`` themselves.
    package func close() async {
        await store.close()
        await kernel.audit.close()
    }
}

/// Closes the store when the service group shuts down.
struct StoreClosingService: Service {
    let store: any AuthStore
    let audit: AuditLog
    func run() async throws {
        try? await gracefulShutdown()
        await store.close()
        await audit.close()
    }
}

/// Deletes expired one-time codes and long-ended approval requests every minute, and expired
/// sessions every ten (a scan of every session, done in parts).
struct ExpiryPurgeService: Service {
    let kernel: Kernel
    func run() async throws {
        var round = 0
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(60)) }
            } catch { return }
            round += 1
            do {
                try await kernel.codes.purgeExpired()
                try await kernel.approvals.purgeExpired()
                try await kernel.rateLimiter.purge()
                try await kernel.decoyRecords?.purge(untouchedSince: kernel.clock.now().addingTimeInterval(-2 * 86_400))
                if round % 10 == 1 { try await kernel.sessions.purgeExpired() }
            } catch {
                kernel.logger.warning("could not purge expired codes, approvals and sessions", metadata: ["error": "\(error)"])
            }
        }
    }
}
