package import Foundation

/// A one-time code as stored: only its keyed hash, never the code.
package struct CodeRecord: Codable, Sendable, Equatable {
    /// What the code is for, e.g. `email_sign_in`.
    package var purpose: String
    /// Whom it is for, e.g. the case-folded email.
    package var key: String
    /// HMAC-SHA-256 (hex) of the code under the server's code secret; empty once used up.
    package var digest: String
    /// When the current code was sent.
    package var sentAt: Date
    /// When the current code stops working.
    package var expiresAt: Date
    /// Wrong tries against the current code.
    package var attempts: Int
    /// Times of recent wrong tries for this key, across codes: a resend does not wipe them.
    package var failures: [Date]
    /// Provider data handed back when the code is used (e.g. a pending registration); never a plain secret.
    package var payload: [String: JSONValue]?

    /// Store key of a purpose and key.
    package static func id(purpose: String, key: String) -> String { "\(purpose):\(key)" }

    /// Store key of this record.
    package var id: String { Self.id(purpose: purpose, key: key) }

    /// Creates a record.
    package init(
        purpose: String, key: String, digest: String, sentAt: Date, expiresAt: Date, attempts: Int = 0, failures: [Date] = [],
        payload: [String: JSONValue]? = nil
    ) {
        self.payload = payload
        self.purpose = purpose
        self.key = key
        self.digest = digest
        self.sentAt = sentAt
        self.expiresAt = expiresAt
        self.attempts = attempts
        self.failures = failures
    }

    package enum CodingKeys: String, CodingKey {
        case purpose, key, digest, sentAt = "sent_at", expiresAt = "expires_at", attempts, failures, payload
    }
}
