import Foundation
import Synchronization
package import Logging

/// Sends mail through a durable queue: a message is sealed (it may carry a code) and stored as a
/// job, then delivered at once; the HTTP answer waits for that first attempt at most
/// `mail.wait_for_delivery` seconds. Transient failures retry with doubling delays up to
/// `mail.max_attempts`; permanent ones (5xx) are logged with the server's reply and dropped; a
/// message still queued at a restart is delivered after it.
public final class Mailer: Sendable {
    /// What a reload (SIGHUP) may change.
    struct Delivery: Sendable {
        var transport: any MailTransport
        var from: String
        var wait: Duration
    }
    /// Shared with the queue's handler, which must see a reload too.
    final class DeliveryBox: Sendable {
        let value: Mutex<Delivery>
        init(_ d: Delivery) { value = Mutex(d) }
        func withLock<R>(_ body: (inout Delivery) -> R) -> R { value.withLock { body(&$0) } }
    }
    private let delivery: DeliveryBox
    /// The transport.
    package var transport: any MailTransport { delivery.withLock { $0.transport } }
    /// The `From` header.
    package var from: String { delivery.withLock { $0.from } }
    /// The wording.
    package let templates: MailTemplates
    let jobs: JobQueue
    let box: SecretBox
    let logger: Logger

    /// Job kind of queued mail.
    package static let jobKind = "mail.send"

    /// Creates the mailer and registers its queue handler.
    package init(
        transport: any MailTransport, from: String, templates: MailTemplates, jobs: JobQueue, box: SecretBox,
        retry: JobQueue.RetryPolicy, waitForDelivery: Duration, logger: Logger
    ) {
        let delivery = DeliveryBox(Delivery(transport: transport, from: from, wait: waitForDelivery))
        self.delivery = delivery
        self.templates = templates
        self.jobs = jobs
        self.box = box
        self.logger = logger
        jobs.register(kind: Self.jobKind, policy: retry) { job in
            // A stand-in queued for an unknown address (``sendDecoy(template:values:code:lifetime:)``): done.
            if case .bool(true) = job.payload["decoy"] { return }
            let (transport, from) = delivery.withLock { ($0.transport, $0.from) }
            guard case .string(let sealed) = job.payload["message"], let json = box.open(sealed),
                let message = try? JSONDecoder().decode(MailMessage.self, from: Data(json.utf8))
            else { throw JobQueue.PermanentFailure("unreadable queued mail") }
            do {
                try await transport.send(message, from: from)
                logger.info("mail delivered", metadata: ["mail.subject": "\(Self.redacted(message))"])
            } catch let error as MailError {
                switch error {
                case .transient: throw error
                case .permanent, .headerInjection:
                    logger.error("mail refused; not retrying", metadata: ["error": "\(error)"])
                    throw JobQueue.PermanentFailure("\(error)")
                }
            }
        }
    }

    /// Adds a template (a provider's own mail) under `name`, which is `PROVIDER.NAME` with the
    /// registering provider's id (`"magic.link"`); an operator's files in
    /// `DATA/templates/PROVIDER.NAME.subject|txt|html` still override its parts.
    ///
    /// Call it from the provider's `init`: the registry refuses a name outside the provider's own
    /// id, and a name registered twice stops start-up.
    /// - Throws: ``ConfigError`` for a malformed name or one already registered.
    public func register(_ name: String, _ template: MailTemplate) throws {
        try templates.register(name, template)
    }

    /// Renders a template and sends it (see `MailTemplates`).
    /// - Parameters:
    ///   - template: the name it was registered under (``register(_:_:)``).
    ///   - to: the address.
    ///   - values: the `{{name}}` placeholders' values (escaped for HTML in the HTML part).
    ///   - code: the one-time code, for `{{code}}` (filled in for you); never logged.
    ///   - waitForDelivery: false returns once the message is queued (durably), without
    ///     waiting for the first attempt (notices that no one is waiting for).
    ///   - lifetime: how long the code or link lives, in seconds, for `{{lifetime}}` (worded in the
    ///     recipient's language).
    ///   - language: the language to write in; nil (the default) for the recipient's `locale` when
    ///     the address is an account's, else the request's language.
    public func send(
        template: String, to: String, values: [String: String] = [:], code: String? = nil, lifetime: Int? = nil, language: String? = nil,
        waitForDelivery: Bool = true
    ) async throws {
        let language = await self.language(language, of: to)
        try await send(templates.render(template, to: to, values: values, code: code, lifetime: lifetime, language: language), waitForDelivery: waitForDelivery)
    }

    /// Where the recipient's language comes from: the account's `locale` by address (the kernel sets it).
    let recipientLanguage = Mutex<(@Sendable (String) async -> String?)?>(nil)

    func language(_ chosen: String?, of address: String) async -> String? {
        if let chosen { return chosen }
        if let lookup = recipientLanguage.withLock({ $0 }), let locale = await lookup(address) { return locale }
        return Messages.language
    }

    /// Does the work of ``send(template:to:values:code:lifetime:language:waitForDelivery:)`` with `waitForDelivery`
    /// false — render, seal, one durable job, one attempt — for an address that has no account, and
    /// delivers nothing: an answer for an unknown address then costs what one for a known address
    /// costs, and its timing says nothing about who has an account.
    public func sendDecoy(template: String, values: [String: String] = [:], code: String? = nil, lifetime: Int? = nil) async throws {
        // The same lookup a real address gets: the answer's timing says nothing either way.
        let language = await self.language(nil, of: "nobody@invalid")
        let message = templates.render(template, to: "nobody@invalid", values: values, code: code, lifetime: lifetime, language: language)
        let sealed = box.seal(String(decoding: try JSONEncoder().encode(message), as: UTF8.self))
        let job = try await jobs.enqueueClaimed(kind: Self.jobKind, payload: ["message": .string(sealed), "decoy": .bool(true)])
        let jobs = self.jobs
        Task { await jobs.run(job, claimed: true) }
    }

    /// Queues a message and tries it at once, waiting for that attempt at most `mail.wait_for_delivery`
    /// (not at all when `waitForDelivery` is false).
    /// - Throws: ``MailError/headerInjection(field:)`` before anything is queued; store errors.
    package func send(_ message: MailMessage, waitForDelivery: Bool = true) async throws {
        _ = try MailComposer.compose(message, from: from)  // refuses control characters in any header
        let sealed = box.seal(String(decoding: try JSONEncoder().encode(message), as: UTF8.self))
        let job = try await jobs.enqueueClaimed(kind: Self.jobKind, payload: ["message": .string(sealed)])
        let jobs = self.jobs
        let attempt = Task { await jobs.run(job, claimed: true) }
        guard waitForDelivery else { return }
        let wait = delivery.withLock { $0.wait }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = await attempt.value }
            group.addTask { try? await Task.sleep(for: wait) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Switches transport, sender, retries and waiting (a SIGHUP reload); mail already queued is
    /// delivered with the new settings.
    package func reconfigure(transport: any MailTransport, from: String, retry: JobQueue.RetryPolicy, waitForDelivery: Duration) {
        delivery.withLock { $0 = Delivery(transport: transport, from: from, wait: waitForDelivery) }
        jobs.setPolicy(kind: Self.jobKind, retry)
    }

    /// The subject without the code, for logs.
    static func redacted(_ message: MailMessage) -> String {
        guard let code = message.code else { return message.subject }
        return message.subject.replacingOccurrences(of: code, with: "******")
    }
}
