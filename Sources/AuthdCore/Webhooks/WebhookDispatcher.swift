import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Logging
import Synchronization

/// Webhooks (contract §9): every event an endpoint subscribed to becomes a durable job before the
/// request that caused it is answered, and is delivered per the Standard Webhooks specification
/// (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`), retried with
/// doubling delays for about a day. At least once: a receiver de-duplicates by `webhook-id`.
/// Redirects are never followed (contract §12): a 3xx is a failed attempt, retried like any other,
/// so a signed event goes only to the URL the configuration checked.
final class WebhookDispatcher: Sendable {
    static let jobKind = "webhook"
    let settings: WebhookSettings
    let jobs: JobQueue
    let clock: any AuthClock
    let logger: Logger
    let http: any OutboundHTTP
    /// This instance's latest attempts, for the console.
    let recent = RecentDeliveries()

    struct DeliveryFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameter http: the client deliveries go through; it never follows a redirect (``OutboundHTTP``).
    init(settings: WebhookSettings, jobs: JobQueue, clock: any AuthClock, logger: Logger, http: any OutboundHTTP) {
        self.http = http
        self.settings = settings
        self.jobs = jobs
        self.clock = clock
        self.logger = logger
        let settings = self.settings, logger = self.logger, recent = self.recent
        jobs.register(kind: Self.jobKind, policy: .init(maxAttempts: settings.maxAttempts, baseDelay: settings.retryDelay)) { job in
            do {
                try await Self.deliver(job, settings: settings, logger: logger, http: http)
                recent.add(job, outcome: "delivered", at: clock.now())
            } catch {
                recent.add(job, outcome: "\(error)", at: clock.now())
                throw error
            }
        }
    }

    /// Queues `type` for every endpoint that wants it; returns once the jobs are stored.
    func enqueue(_ type: String, _ data: [String: JSONValue]) async {
        let endpoints = settings.endpoints.filter { $0.events.contains(type) }
        guard !endpoints.isEmpty else { return }
        let now = clock.now()
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("data"); w.value(.object(data))
        w.key("timestamp"); w.string(Timestamp.string(now))
        w.key("type"); w.string(type)
        w.endObject()
        let body = String(decoding: w.bytes, as: UTF8.self)
        for endpoint in endpoints {
            let payload: [String: JSONValue] = [
                "url": .string(endpoint.url), "id": .string(Self.messageID(type, data, url: endpoint.url)),
                "timestamp": .number(Double(Int(now.timeIntervalSince1970))), "body": .string(body),
            ]
            do {
                let job = try await jobs.enqueueClaimed(kind: Self.jobKind, payload: payload)
                // The first attempt at once; the runner retries.
                let jobs = self.jobs
                Task { _ = await jobs.run(job, claimed: true) }
            } catch {
                logger.error("webhook event could not be queued", metadata: ["event": "\(type)", "error": "\(error)"])
            }
        }
    }

    /// A message's `webhook-id`: random, but for an approval's events one per approval, event and
    /// endpoint. Those are sent by a job that runs again when the process stopped before removing
    /// it, and the receiver then sees the same id twice and keeps one (Standard Webhooks).
    static func messageID(_ type: String, _ data: [String: JSONValue], url: String) -> String {
        guard type.hasPrefix("approval."), case .string(let approval)? = data["approval_id"] else {
            return "msg_" + Base64URL.encode(SecureRandom.bytes(16))
        }
        return "msg_" + Base64URL.encode(Array(SHA256.hash("\(type)\u{0}\(approval)\u{0}\(url)").prefix(16)))
    }

    /// The `webhook-signature` of a message: `v1,` and the base64 of HMAC-SHA256(`id.timestamp.body`).
    static func signature(secret: [UInt8], id: String, timestamp: Int, body: String) -> String {
        "v1," + Data(SHA256.hmac(key: secret, message: Array("\(id).\(timestamp).\(body)".utf8))).base64EncodedString()
    }

    static func deliver(_ job: JobRecord, settings: WebhookSettings, logger: Logger, http: any OutboundHTTP) async throws {
        guard case .string(let url) = job.payload["url"], case .string(let id) = job.payload["id"],
            case .number(let ts) = job.payload["timestamp"], case .string(let body) = job.payload["body"]
        else { throw JobQueue.PermanentFailure("a webhook job without its message") }
        guard let endpoint = settings.endpoints.first(where: { $0.url == url }) else {
            throw JobQueue.PermanentFailure("the endpoint \(url) is no longer configured")
        }
        let timestamp = Int(ts)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.userAgent] = "authd-webhooks"
        headers[HTTPField.Name("webhook-id")!] = id
        headers[HTTPField.Name("webhook-timestamp")!] = String(timestamp)
        headers[HTTPField.Name("webhook-signature")!] = signature(secret: endpoint.secret, id: id, timestamp: timestamp, body: body)
        // A receiver's answer does not matter, its status does; the body read is bounded all the same.
        let request = OutboundRequest(method: .post, url: url, headers: headers, body: Array(body.utf8), timeout: .seconds(settings.timeout))
        let response: OutboundResponse
        do {
            response = try await http.send(request)
        } catch {
            logger.warning("webhook delivery failed", metadata: ["webhook.id": "\(id)", "url": "\(ConfigSecrets.redactedURL(url))", "error": "\(error)"])
            throw DeliveryFailed(description: "\(error)")
        }
        guard (200..<300).contains(response.status.code) else {
            logger.warning("webhook refused", metadata: ["webhook.id": "\(id)", "url": "\(ConfigSecrets.redactedURL(url))", "status": "\(response.status.code)"])
            let redirect = (300..<400).contains(response.status.code) ? " (a redirect, which is never followed)" : ""
            throw DeliveryFailed(description: "the receiver answered \(response.status.code)\(redirect)")
        }
        logger.info("webhook delivered", metadata: ["webhook.id": "\(id)", "url": "\(ConfigSecrets.redactedURL(url))"])
    }
}

/// The latest delivery attempts of this instance (the console's "recent deliveries"): bounded, in memory.
final class RecentDeliveries: Sendable {
    struct Attempt: Sendable {
        var messageID: String
        var url: String
        var attempt: Int
        var outcome: String
        var at: Date
    }

    static let limit = 100
    private let attempts = Mutex<[Attempt]>([])

    func add(_ job: JobRecord, outcome: String, at: Date) {
        var id = "", url = ""
        if case .string(let m)? = job.payload["id"] { id = m }
        if case .string(let u)? = job.payload["url"] { url = u }
        let attempt = Attempt(messageID: id, url: url, attempt: job.attempts + 1, outcome: String(outcome.prefix(200)), at: at)
        attempts.withLock {
            $0.append(attempt)
            if $0.count > Self.limit { $0.removeFirst($0.count - Self.limit) }
        }
    }

    /// Newest first.
    var list: [Attempt] { attempts.withLock { $0.reversed() } }
}

// It holds every endpoint's signing secret: a log line or a `dump` shows its name only (contract §17).
extension WebhookDispatcher: RedactedDescription {}
