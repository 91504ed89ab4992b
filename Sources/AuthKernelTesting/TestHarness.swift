package import AuthdCore
package import FileStore
import AuthStorage
public import AuthKernel
import Foundation
import Hummingbird
import NIOEmbedded
import ServiceLifecycle
import Logging
import Synchronization

/// The kernel and the providers you choose, on a fresh temporary data folder, with a manual clock,
/// mail kept in an outbox and logs kept in memory: what a provider's tests run against.
///
/// ```swift
/// @Test func aCodeCreatesItsAccountThenSignsBackIntoIt() async throws {
///     let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: Self.config)
///     try await h.test { client async throws in
///         let first = try await client.send(.post, "/api/v1/auth/invite/redeem", json: ["code": "ada-7d2f-93ac-41b8", "display_name": "Ada", "device_name": "Ada's phone"])
///         #expect(first.status == .ok)
///     }
///     #expect(try h.audit(event: "sign_in").count == 3)
/// }
/// ```
public struct TestHarness: Sendable {
    /// The server, as `authd serve` would run it, without a socket.
    package let server: AuthServer
    /// The clock every service reads; ``ManualClock/advance(_:)`` steps over expiries.
    public let clock: ManualClock
    /// The data folder (removed when the test process exits).
    public let folder: String
    /// Everything logged.
    public let logs: LogCapture
    /// Disk fault injection.
    package let faults: StoreFaults
    /// The port the server binds when a test runs it over sockets.
    let listening: ListeningPort

    /// The kernel services, as the providers see them.
    public var kernel: Kernel { server.kernel }

    /// Every route served, as `METHOD /path`.
    public var routes: [String] { server.routes }

    /// Builds a server with `providers` available and `config` (the JSON configuration file's text;
    /// its `providers` list chooses which start, by default those that start by default). Mail goes
    /// to ``outbox()`` unless `config` names another `mail.transport`, so ``mail(to:)`` reads it.
    /// - Parameter http: what ``Kernel/http`` sends through: a stand-in answering as the identity
    ///   provider would; by default none (every request fails).
    public static func make(
        providers: [any AuthProvider.Type], config: String = #"{"mail":{"transport":"outbox"}}"#, clock: ManualClock = ManualClock(),
        http: any OutboundHTTP = NoOutboundHTTP()
    ) async throws -> TestHarness {
        try await make(providers: providers, config: config, folder: nil, clock: clock, configure: { $0.http = http })
    }

    /// Builds a server with the store, keys, counters or cluster given (the repository's own tests).
    package static func make(
        providers: [any AuthProvider.Type] = [], config: String = #"{"mail":{"transport":"outbox"}}"#, folder: String? = nil,
        clock: ManualClock = ManualClock(), store: (any AuthStore)? = nil, rateLimitCounters: (any RateLimitCounters)? = nil,
        keys: (any ServerKeys)? = nil, cluster: (any ClusterEvents)? = nil, decoyRecords: (any DecoyRecordStore)? = nil,
        configure: (inout AuthServer.Options) -> Void = { _ in }
    ) async throws -> TestHarness {
        let folder = folder ?? temporaryFolder()
        let logs = LogCapture()
        let registry = ProviderRegistry(providers)
        let parsed = try AuthConfig.parse(Data(Self.capturingMail(config).utf8), host: "127.0.0.1", port: 0, availableProviders: registry.ids, defaultProviders: registry.defaultIDs, sectionNames: registry.sectionNames)
        var options = AuthServer.Options(dataFolder: folder, host: "127.0.0.1", port: 0, config: parsed, logger: logs.logger())
        options.clock = clock
        let faults = StoreFaults()
        options.faults = faults
        options.store = store
        options.rateLimitCounters = rateLimitCounters
        options.keys = keys
        options.cluster = cluster
        options.decoyRecords = decoyRecords
        let listening = ListeningPort()
        options.onServerRunning = { url in listening.set(url) }
        configure(&options)
        let server = try await AuthServer.make(options, registry: registry)
        return TestHarness(server: server, clock: clock, folder: folder, logs: logs, faults: faults, listening: listening)
    }

    /// `config` with `mail.transport` set to `outbox` when it names none: a test reads the mail sent.
    static func capturingMail(_ config: String) -> String {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(config.utf8))) as? [String: Any] else { return config }
        var mail = object["mail"] as? [String: Any] ?? [:]
        guard mail["transport"] == nil else { return config }
        mail["transport"] = "outbox"
        object["mail"] = mail
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return config }
        return String(decoding: data, as: UTF8.self)
    }

    /// The lines of `DATA/audit.jsonl` so far, those of `event` when given: what a test checks a
    /// provider audited (and that a sign-in is audited once, by the kernel).
    /// - Throws: ``UndeclaredAuditEvent`` when neither the kernel nor a provider started declares
    ///   `event`: a misspelt name fails instead of finding nothing.
    public func audit(event: String? = nil) throws -> [[String: Any]] {
        if let event, !kernel.audit.declaredEvents.contains(where: { $0.name == event }) {
            throw UndeclaredAuditEvent(name: event)
        }
        guard let data = FileManager.default.contents(atPath: folder + "/audit.jsonl") else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { event == nil || $0["event"] as? String == event }
    }

    /// Runs `body` with a client of the router (no sockets; the client's address is "unknown"), or,
    /// with `overSockets`, of the server listening on 127.0.0.1 (so `http.trusted_proxies` and
    /// `X-Forwarded-For` can stand in for other addresses); then closes the server's store.
    public func test<R: Sendable>(overSockets: Bool = false, _ body: @Sendable (HarnessClient) async throws -> R) async throws -> R {
        do {
            let result = try await overSockets ? overSocket(body) : throughRouter(body)
            await server.close()
            return result
        } catch {
            await server.close()
            throw error
        }
    }

    /// The application runs as `authd serve` does; the client connects to the port it bound.
    private func overSocket<R: Sendable>(_ body: @Sendable (HarnessClient) async throws -> R) async throws -> R {
        let application = server.application
        let listening = self.listening
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let services = ServiceGroup(configuration: .init(services: [application], logger: application.logger))
            group.addTask { try await services.run() }
            do {
                let value = try await body(HarnessClient(target: .socket(port: await listening.port())))
                await services.triggerGracefulShutdown()
                return value
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }

    /// Requests go straight to the router; the server's services (job runner, purges) run meanwhile.
    private func throughRouter<R: Sendable>(_ body: @Sendable (HarnessClient) async throws -> R) async throws -> R {
        let application = server.application
        let responder = application.responder
        let logger = application.logger
        let client = HarnessClient(
            target: .router { request in
                var logger = logger
                // What Hummingbird's server puts there, and `context.id` reads.
                logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
                let context = AuthRequestContext(source: .init(channel: NIOAsyncTestingChannel(), logger: logger))
                do {
                    return try await responder.respond(to: request, context: context)
                } catch let error as any HTTPResponseError {
                    return try error.response(from: request, context: context)
                } catch {
                    return Response(status: .internalServerError)
                }
            })
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let (started, didStart) = AsyncStream.makeStream(of: Void.self)
            let services = ServiceGroup(
                configuration: .init(services: application.services + [StartedSignal(continuation: didStart)], logger: logger))
            group.addTask { try await services.run() }
            do {
                // Until the group runs, a shutdown triggered by a quick test would be lost.
                await started.first { _ in true }
                let value = try await body(client)
                await services.triggerGracefulShutdown()
                return value
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }

    /// Signs a user in directly through the kernel, with identity `("test", subject)`, and returns
    /// the session (no sign-in policy is asked): a Bearer token for a test of a protected route.
    public func signIn(_ subject: String = "someone", email: String? = nil, device: String? = nil) async throws -> SessionResponse {
        let user = try await kernel.users.signIn(
            .init(identity: Identity(provider: "test", subject: subject), email: email, emailVerified: email != nil), linkingTo: nil
        )
        return try await kernel.sessions.startSession(user, amr: ["test"], device: try DeviceInfo(name: device, platform: nil))
    }

    /// The raw lines of `DATA/outbox.jsonl`, each `{"to","subject","text","html"?,"code"?,"template"?,"sent_at"}`.
    /// Read codes and links through ``mail(to:)`` instead: as a person reads them.
    public func outbox() throws -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: folder + "/outbox.jsonl") else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The mail sent so far, to `address` when given, as a person reads it.
    /// - Throws: ``MailDefect`` when any message sent so far has a `{{…}}` left in it, or shows a
    ///   code or link in its text that its HTML lacks.
    public func mail(to address: String? = nil) throws -> [SentMail] {
        let all = try outbox().compactMap(SentMail.init)
        for mail in all { try mail.check() }
        return all.filter { address == nil || $0.to == address }
    }
}

/// A message the server sent, as ``TestHarness/mail(to:)`` reads it from the outbox.
public struct SentMail: Sendable, Equatable {
    /// The recipient.
    public var to: String
    /// The subject line.
    public var subject: String
    /// The plain-text body.
    public var text: String
    /// The HTML body, if the message has one.
    public var html: String?
    /// The template it was rendered from (`PROVIDER.NAME`).
    public var template: String?

    /// Reads one line of `DATA/outbox.jsonl`; nil when it is not a message.
    public init?(outboxLine: some StringProtocol) {
        guard let line = try? JSONSerialization.jsonObject(with: Data(String(outboxLine).utf8)) as? [String: Any] else { return nil }
        self.init(line)
    }

    init?(_ line: [String: Any]) {
        guard let to = line["to"] as? String, let subject = line["subject"] as? String, let text = line["text"] as? String else { return nil }
        (self.to, self.subject, self.text) = (to, subject, text)
        (self.html, self.template) = (line["html"] as? String, line["template"] as? String)
    }

    /// The code a person reads: the first run of six to ten digits in the subject, else in the text.
    public var code: String? { Self.firstCode(in: subject) ?? Self.firstCode(in: text) }

    /// The first `http://` or `https://` link in the text.
    public var link: String? {
        guard let start = text.range(of: "https://") ?? text.range(of: "http://") else { return nil }
        return String(text[start.lowerBound...].prefix { !$0.isWhitespace && $0 != "<" && $0 != ">" && $0 != "\"" })
    }

    /// Checks what a person would notice: nothing of a template left unfilled, and the code or link
    /// of the text shown in the HTML too.
    /// - Throws: ``MailDefect``.
    public func check() throws {
        for (part, content) in [("subject", subject), ("text", text), ("html", html ?? "")] where content.contains("{{") {
            throw MailDefect("the \(part) of \"\(subject)\" to \(to) has a placeholder left: \(content)")
        }
        guard let html else { return }
        if let code, !html.contains(code) { throw MailDefect("the HTML of \"\(subject)\" to \(to) lacks the code \(code) its text shows") }
        if let link, !html.contains(link.replacingOccurrences(of: "&", with: "&amp;")), !html.contains(link) {
            throw MailDefect("the HTML of \"\(subject)\" to \(to) lacks the link its text shows")
        }
    }

    static func firstCode(in string: String) -> String? {
        var run = ""
        for character in string + " " {
            if character.isASCII, character.isNumber {
                run.append(character)
            } else {
                if (6...10).contains(run.count) { return run }
                run = ""
            }
        }
        return nil
    }
}

/// What ``SentMail/check()`` found wrong with a message.
public struct MailDefect: Error, CustomStringConvertible {
    /// What is wrong, in words.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A new empty folder under the system's temporary directory, removed when the test process exits
/// (a full run made a few hundred, data folders with keys among them, and left them all behind).
package func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "authd-test-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    TemporaryFolders.made.withLock { made in
        if made.isEmpty { atexit { TemporaryFolders.removeAll() } }
        made.append(path)
    }
    return path
}

/// The folders ``temporaryFolder()`` made in this process.
enum TemporaryFolders {
    static let made = Mutex<[String]>([])

    static func removeAll() {
        for path in made.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}

/// Thrown by ``TestHarness/audit(event:)`` for a name nothing declares.
public struct UndeclaredAuditEvent: Error, CustomStringConvertible {
    /// The name asked for.
    public let name: String
    /// Why.
    public var description: String { "no audit event named \(name) is declared by the kernel or a provider started" }
}
