public import Foundation

/// Work that must happen eventually and survive restarts (e.g. revoking a third party's token
/// after an account was deleted), kept in the store until a handler succeeds or gives up.
public struct JobRecord: Codable, Sendable, Equatable {
    /// Unique id.
    public var id: UUID
    /// Which handler runs it, e.g. `apple.revoke`.
    public var kind: String
    /// Handler data; never a plain secret.
    public var payload: [String: JSONValue]
    /// Attempts so far.
    public var attempts: Int
    /// Not before this time.
    public var runAfter: Date
    /// Creation time.
    public var createdAt: Date

    /// Creates a record.
    package init(id: UUID, kind: String, payload: [String: JSONValue], attempts: Int, runAfter: Date, createdAt: Date) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.attempts = attempts
        self.runAfter = runAfter
        self.createdAt = createdAt
    }

    package enum CodingKeys: String, CodingKey { case id, kind, payload, attempts, runAfter = "run_after", createdAt = "created_at" }
}
