/// One line of the journal: the changes of one write, applied together or not at all.
struct JournalLine: Codable, Sendable {
    /// Position in the total order of writes; each line is one more than the line before.
    var seq: UInt64
    /// The changes, in the order they were applied.
    var changes: [StoreChange]
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
