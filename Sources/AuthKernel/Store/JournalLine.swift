import Foundation

/// One line of the journal: the changes of one write, applied together or not at all.
struct JournalLine: Codable, Sendable {
    /// Position in the total order of writes; each line is one more than the line before.
    var seq: UInt64
    /// The changes, in the order they were applied.
    var changes: [StoreChange]
}

extension JournalLine {
    /// The line's bytes (no newline), in the JSON `StoreCoding.encoder()` produces. Users and
    /// sessions (nearly every line) are written by hand: `JSONEncoder` was the largest cost of a
    /// refresh and of a store write (bench/README.md); other records go through `encoder`.
    func encoded(with encoder: JSONEncoder) throws -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.key("changes")
        w.beginArray()
        for change in changes { try change.write(to: &w, fallback: encoder) }
        w.endArray()
        w.key("seq"); w.int(Int(seq))
        w.endObject()
        return w.bytes
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
