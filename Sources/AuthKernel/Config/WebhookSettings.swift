import Foundation

/// Webhook endpoints (contract §9): the `webhooks` list, and how deliveries are retried
/// (`webhook_delivery`, authd's own section).
package struct WebhookSettings: Sendable {
    /// One receiver.
    package struct Endpoint: Sendable, Equatable {
        /// Where events are POSTed: `https://`, or `http://` to loopback.
        package var url: String
        /// The key of `whsec_…` (its base64 decoded): HMAC-SHA256 signs every delivery.
        package var secret: [UInt8]
        /// The event types it gets.
        package var events: Set<String>
    }

    /// Every event type authd emits.
    package static let types: Set<String> = [
        "user.created", "user.updated", "user.deleted", "session.created", "session.ended", "password.changed",
        "approval.requested", "approval.resolved", "device.approved", "api_key.created", "api_key.revoked",
    ]

    /// The receivers.
    package var endpoints: [Endpoint] = []
    /// Delay after the first failed delivery, seconds; it doubles, at most six hours apart.
    package var retryDelay = 30
    /// Attempts before an event is given up: with the default delay, about a day of retries.
    package var maxAttempts = 15
    /// Seconds a receiver has to answer.
    package var timeout = 10

    /// Creates the defaults (no webhooks).
    package init() {}

    /// Reads `webhooks` and `webhook_delivery` from the top level.
    package init(_ top: inout ConfigSection) throws {
        for var section in try top.sections("webhooks") {
            guard let url = try section.optionalString("url"), let components = URLComponents(string: url), let host = components.host,
                components.scheme == "https" || (components.scheme == "http" && ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host))
            else {
                throw ConfigError("\(section.path).url must be an https:// URL (or http:// to 127.0.0.1, ::1 or localhost)")
            }
            guard let file = try section.optionalString("secret_file") else { throw ConfigError("\(section.path).secret_file is required") }
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw ConfigError("\(section.path).secret_file: cannot read \(file)") }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.hasPrefix("whsec_"), let key = Data(base64Encoded: String(trimmed.dropFirst(6))), key.count >= 24 else {
                throw ConfigError("\(section.path).secret_file must hold a secret whsec_ followed by at least 24 bytes in base64")
            }
            let events = Set(try section.strings("events", default: Array(Self.types)))
            if let unknown = events.subtracting(Self.types).sorted().first {
                throw ConfigError("\(section.path).events: unknown event type \(unknown)")
            }
            try section.rejectUnknownKeys()
            endpoints.append(Endpoint(url: url, secret: Array(key), events: events))
        }
        var delivery = try top.section("webhook_delivery")
        retryDelay = try delivery.int("retry_delay", default: retryDelay, in: 1...3600)
        maxAttempts = try delivery.int("max_attempts", default: maxAttempts, in: 1...100)
        timeout = try delivery.int("timeout", default: timeout, in: 1...120)
        try delivery.rejectUnknownKeys()
    }
}
