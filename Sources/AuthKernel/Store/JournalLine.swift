/// One line of the journal: the changes of one write, applied together or not at all.
struct JournalLine: Codable, Sendable {
    /// Position in the total order of writes; each line is one more than the line before.
    var seq: UInt64
    /// The changes, in the order they were applied.
    var changes: [StoreChange]
}

/// The snapshot file: the whole state as of `seq`.
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

    static let currentFormat = 1
}
