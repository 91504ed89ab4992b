import Foundation

/// One line of the journal: the changes of one write, applied together or not at all.
struct JournalLine: Codable, Sendable {
    /// Position in the total order of writes; each line is one more than the line before.
    var seq: UInt64
    /// The changes, in the order they were applied.
    var changes: [StoreChange]
}

extension JournalLine {
    /// The line's bytes (no newline). Lines of session changes only (every refresh, sign-in and
    /// logout) are written by hand in the same JSON `StoreCoding.encoder()` produces, because
    /// `JSONEncoder` was the largest cost of a refresh; others go through `JSONEncoder`.
    func encoded(with encoder: JSONEncoder) throws -> [UInt8] {
        guard changes.allSatisfy({ if case .putSession = $0 { true } else if case .deleteSession = $0 { true } else { false } }) else {
            return Array(try encoder.encode(self))
        }
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.key("changes")
        w.beginArray()
        for change in changes {
            w.beginObject()
            switch change {
            case .putSession(let s):
                w.key("op"); w.string("put_session")
                w.key("session"); s.write(to: &w)
            case .deleteSession(let id):
                w.key("id"); w.uuid(id)
                w.key("op"); w.string("delete_session")
            default: break
            }
            w.endObject()
        }
        w.endArray()
        w.key("seq"); w.int(Int(seq))
        w.endObject()
        return w.bytes
    }
}

extension SessionRecord {
    /// Keys sorted and dates as Unix seconds, as `StoreCoding.encoder()` writes them; absent optionals omitted.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("amr"); w.strings(amr)
        w.key("created_at"); w.double(createdAt.timeIntervalSince1970)
        if let deviceName { w.key("device_name"); w.string(deviceName) }
        w.key("expires_at"); w.double(expiresAt.timeIntervalSince1970)
        w.key("id"); w.uuid(id)
        w.key("last_used_at"); w.double(lastUsedAt.timeIntervalSince1970)
        if let platform { w.key("platform"); w.string(platform) }
        w.key("refresh_hashes"); w.strings(refreshHashes)
        w.key("retired")
        w.beginArray()
        for r in retired {
            w.beginObject()
            w.key("hash"); w.string(r.hash)
            w.key("retired_at"); w.double(r.retiredAt.timeIntervalSince1970)
            w.endObject()
        }
        w.endArray()
        w.key("user_id"); w.uuid(userID)
        w.endObject()
    }
}

/// Format 1 of the snapshot file (one JSON object), still read; see ``SnapshotFile`` for format 2.
struct Snapshot: Codable, Sendable {
    /// Format version; start-up refuses others.
    var format: Int
    /// Last journal line included.
    var seq: UInt64
    var users: [UserRecord]
    var sessions: [SessionRecord]
    var codes: [CodeRecord]
    var approvals: [ApprovalRecord]?
    var jobs: [JobRecord]?

}
