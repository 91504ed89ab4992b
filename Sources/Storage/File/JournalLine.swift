import AuthStorage
import Foundation

/// One line of the journal: the changes of one write, applied together or not at all.
struct JournalLine: Codable, Sendable {
    /// Position in the total order of writes; each line is one more than the line before.
    package var seq: UInt64
    /// The changes, in the order they were applied.
    package var changes: [StoreChange]
}

extension JournalLine {
    /// The line's bytes (no newline), in the JSON `StoreCoding.encoder()` produces. Users and
    /// sessions (nearly every line) are written by hand: `JSONEncoder` was the largest cost of a
    /// refresh and of a store write (docs/benchmarks.md); other records go through `encoder`.
    package func encoded(with encoder: JSONEncoder) throws -> [UInt8] {
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
    package var format: Int
    /// Last journal line included.
    package var seq: UInt64
    package var users: [UserRecord]
    package var sessions: [SessionRecord]
    package var codes: [CodeRecord]
    package var approvals: [ApprovalRecord]?
    package var jobs: [JobRecord]?

}

extension JournalLine {
    /// A journal line of user and session changes (nearly every line) read by ``JSONReader``: replaying
    /// a long journal after a crash went through `JSONDecoder` line by line. Nil for anything else.
    package static func fastDecode(_ bytes: UnsafeBufferPointer<UInt8>) -> JournalLine? {
        var reader = JSONReader(bytes)
        var seq: UInt64?
        var changes: [StoreChange]?
        do {
            try reader.object { r, key in
                switch key {
                case "seq":
                    guard let n = UInt64(exactly: try r.number()) else { throw JSONReader.Mismatch() }
                    seq = n
                case "changes":
                    var list: [StoreChange] = []
                    try r.array { list.append(try StoreChange.read(&$0)) }
                    changes = list
                default: throw JSONReader.Mismatch()
                }
            }
            guard reader.atEnd, let seq, let changes else { return nil }
            return JournalLine(seq: seq, changes: changes)
        } catch {
            return nil
        }
    }
}
