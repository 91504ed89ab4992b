package import AuthStorage
import Dispatch
import Foundation

/// `snapshot.json`: the whole state as of one journal sequence number.
///
/// Format 2 (written now) is JSON lines: a header `{"format":2,"seq":N,"records":M}`, then one record
/// per line in the journal's own change encoding (`{"op":"put_user","user":{…}}`). Lines are encoded
/// and decoded in parallel chunks on every core: one JSON document of a million users took 12 s to
/// decode on one core. Format 1 (one JSON object) is still read.
package enum SnapshotFile {
    /// A format-2 snapshot's first line.
    package struct Header: Codable {
        package var format: Int
        package var seq: UInt64
        package var records: Int
    }

    package static let currentFormat = 2

    /// Encodes the state (in parallel) as header + lines, straight from the tables' shards: users,
    /// sessions, codes, approvals, jobs, each in no particular order (start-up needs none). Sorting
    /// the users by creation time and gathering every record into one array first cost a copy of
    /// each record in a compaction at a million users.
    ///
    /// - Parameter inBackground: encode on the calling thread only. A compaction runs while requests
    ///   are served: on every core it finished sooner but held up writes for 150-300 ms at a million
    ///   users (writers waiting for a core); on one it leaves the others to the requests.
    package static func encode(_ state: StoreState, seq: UInt64, inBackground: Bool = false) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try write(state, seq: seq, inBackground: inBackground) { bytes += $0 }
        return bytes
    }

    /// Hands the snapshot's bytes to `write` part by part as they are encoded (header first, then the
    /// parts in the order they finish, which start-up does not need), never holding more than the
    /// parts being encoded: a compaction at a million users held the whole encoded snapshot (280 MB)
    /// on top of the state before writing any of it.
    ///
    /// Calls of `write` do not overlap. The first error, from encoding or from `write`, stops the rest
    /// and is thrown.
    ///
    /// - Parameter written: told, after each part, how many records it held (for a progress display).
    package static func write(
        _ state: StoreState, seq: UInt64, inBackground: Bool = false, written: (Int) -> Void = { _ in }, to write: ([UInt8]) throws -> Void
    ) throws {
        try write(header(state, seq: seq))
        let parts = Parts(state)
        if inBackground {
            for i in 0..<parts.count {
                let (bytes, records) = try parts.encode(i)
                try write(bytes)
                written(records)
            }
            return
        }
        try withoutActuallyEscaping(write) { write in
            try withoutActuallyEscaping(written) { written in
                let writer = SerialWriter { bytes, records in
                    try write(bytes)
                    written(records)
                }
                DispatchQueue.concurrentPerform(iterations: parts.count) { i in
                    guard !writer.failed else { return }
                    writer.run { try parts.encode(i) }
                }
                try writer.check()
            }
        }
    }

    /// The first line of a snapshot of `records` records (a stream's, written before its records).
    package static func header(records: Int, seq: UInt64) throws -> [UInt8] {
        var header = try [UInt8](StoreCoding.encoder().encode(Header(format: currentFormat, seq: seq, records: records)))
        header.append(0x0A)
        return header
    }

    /// Records as the snapshot's lines.
    package static func lines(_ records: [StoreChange]) throws -> [UInt8] {
        let encoder = StoreCoding.encoder()
        var w = JSONWriter(capacity: records.count * 1024)
        for record in records {
            try record.write(to: &w, fallback: encoder)
            w.newline()
        }
        return w.bytes
    }

    /// How many records a snapshot of `state` holds.
    package static func recordCount(_ state: StoreState) -> Int {
        state.users.count + state.sessions.count + state.codes.count + state.approvals.count + state.jobs.count
    }

    private static func header(_ state: StoreState, seq: UInt64) throws -> [UInt8] {
        let records = recordCount(state)
        var header = try [UInt8](StoreCoding.encoder().encode(Header(format: currentFormat, seq: seq, records: records)))
        header.append(0x0A)
        return header
    }

    /// The snapshot's body in parts: each one table's records in a range of its shards, encoded
    /// independently (in parallel, or one after another in the background).
    private struct Parts: Sendable {
        let state: StoreState
        let ranges: [(table: Int, shards: Range<Int>)]
        var count: Int { ranges.count }

        init(_ state: StoreState) {
            self.state = state
            let slices = 16
            let shards = ShardedTable<UUID, UserRecord>.shardCount
            ranges = (0..<5).flatMap { table in
                (0..<slices).map { i in (table, (i * shards / slices)..<((i + 1) * shards / slices)) }
            }
        }

        /// The part's lines and how many records they hold.
        func encode(_ i: Int) throws -> (bytes: [UInt8], records: Int) {
            let encoder = StoreCoding.encoder()
            var w = JSONWriter(capacity: 64 * 1024)
            var records = 0
            func line(_ change: StoreChange) throws {
                try change.write(to: &w, fallback: encoder)
                w.newline()
                records += 1
            }
            let range = ranges[i].shards
            switch ranges[i].table {
            case 0: try state.users.forEachValue(inShards: range) { try line(.putUser($0)) }
            case 1: try state.sessions.forEachValue(inShards: range) { try line(.putSession($0)) }
            case 2: try state.codes.forEachValue(inShards: range) { try line(.putCode($0)) }
            case 3: try state.approvals.forEachValue(inShards: range) { try line(.putApproval($0)) }
            default: try state.jobs.forEachValue(inShards: range) { try line(.putJob($0)) }
            }
            return (w.bytes, records)
        }
    }

    /// Decodes either format into changes to apply, in file order, and the sequence number.
    package static func decode(_ bytes: [UInt8], path: String) throws -> (seq: UInt64, changes: [StoreChange]) {
        let decoded = try decodeChunks(bytes, path: path)
        return (decoded.seq, decoded.chunks.flatMap { $0 })
    }

    /// Decodes either format into chunks of changes (in file order, chunk by chunk) and the sequence
    /// number. Start-up takes the chunks as they are: joining a million records into one array was
    /// another pass over all of them.
    ///
    /// - Parameter keep: false to check that every record decodes without keeping any (the chunks
    ///   come back empty): a restore only needs to know, and a million decoded records are most of
    ///   a gigabyte.
    package static func decodeChunks(_ bytes: [UInt8], path: String, keep: Bool = true) throws -> (seq: UInt64, chunks: [[StoreChange]]) {
        let firstNewline = bytes.firstIndex(of: 0x0A) ?? bytes.count
        let decoder = StoreCoding.decoder()
        if let header = try? decoder.decode(Header.self, from: Data(bytes[0..<firstNewline])), header.format == currentFormat {
            let lines = lineRanges(bytes, from: firstNewline + 1)
            guard lines.count == header.records else {
                throw StoreError.corrupt(path: path, line: nil, reason: "the snapshot has \(lines.count) records, its header says \(header.records)")
            }
            return (header.seq, try decodeLineChunks(bytes, lines, path: path, firstLine: 2, keep: keep))
        }
        // Format 1: one JSON object.
        let snapshot: Snapshot
        do { snapshot = try decoder.decode(Snapshot.self, from: Data(bytes)) } catch {
            throw StoreError.corrupt(path: path, line: nil, reason: "not a valid snapshot (\(error))")
        }
        guard snapshot.format == 1 else {
            throw StoreError.corrupt(path: path, line: nil, reason: "snapshot format \(snapshot.format) is not supported")
        }
        var changes: [StoreChange] = snapshot.users.map { .putUser($0) } + snapshot.sessions.map { .putSession($0) }
        changes += snapshot.codes.map { .putCode($0) } + (snapshot.approvals ?? []).map { .putApproval($0) } + (snapshot.jobs ?? []).map { .putJob($0) }
        return (snapshot.seq, keep ? [changes] : [])
    }

    /// Decodes the records at `lines` of `bytes` (on every core), in order; `firstLine` is the first
    /// one's line number in `path`, for the error.
    package static func decodeLines(_ bytes: [UInt8], _ lines: [Range<Int>], path: String, firstLine: Int, keep: Bool = true) throws -> [StoreChange] {
        try decodeLineChunks(bytes, lines, path: path, firstLine: firstLine, keep: keep).flatMap { $0 }
    }

    /// ``decodeLines(_:_:path:firstLine:keep:)`` in the chunks it decoded on each core.
    static func decodeLineChunks(_ bytes: [UInt8], _ lines: [Range<Int>], path: String, firstLine: Int, keep: Bool) throws -> [[StoreChange]] {
        let chunks = chunkRanges(lines.count)
        let parts = ParallelResults<[StoreChange]>(count: chunks.count)
        DispatchQueue.concurrentPerform(iterations: chunks.count) { i in
            let decoder = StoreCoding.decoder()
            var out: [StoreChange] = []
            if keep { out.reserveCapacity(chunks[i].count) }
            for index in chunks[i] {
                // Users and sessions (nearly every record) by hand; anything else, or anything
                // unexpected, through JSONDecoder.
                if let fast = bytes.withUnsafeBufferPointer({ StoreChange.fastDecode(UnsafeBufferPointer(rebasing: $0[lines[index]])) }) {
                    if keep { out.append(fast) }
                    continue
                }
                do {
                    let change = try decoder.decode(StoreChange.self, from: Data(bytes[lines[index]]))
                    if keep { out.append(change) }
                } catch {
                    parts.set(i, .failure(StoreError.corrupt(path: path, line: firstLine + index, reason: "not a valid snapshot record (\(error))")))
                    return
                }
            }
            parts.set(i, .success(out))
        }
        return try parts.values()
    }

    /// The non-empty lines from `start` on. Runs before the parallel decoding, so it uses `memchr`: a
    /// byte loop over a million users' snapshot took 0.1-0.2 s of start-up by itself.
    package static func lineRanges(_ bytes: [UInt8], from start: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var lineStart = start
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            while lineStart < buffer.count {
                guard let hit = memchr(base + lineStart, 0x0A, buffer.count - lineStart) else { break }
                let i = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
                if i > lineStart { ranges.append(lineStart..<i) }
                lineStart = i + 1
            }
        }
        if lineStart < bytes.count { ranges.append(lineStart..<bytes.count) }
        return ranges
    }

    /// Splits `0..<count` into a few chunks per core.
    package static func chunkRanges(_ count: Int) -> [Range<Int>] {
        let chunks = max(1, min(count / 1000, ProcessInfo.processInfo.activeProcessorCount * 4))
        let size = (count + chunks - 1) / max(chunks, 1)
        return stride(from: 0, to: max(count, 1), by: max(size, 1)).map { $0..<min($0 + max(size, 1), count) }
    }
}

/// Runs the parallel encoders' writes one at a time and keeps the first error.
private final class SerialWriter: @unchecked Sendable {
    private let write: ([UInt8], Int) throws -> Void
    private let lock = NSLock()
    private var error: (any Error)?

    package init(_ write: @escaping ([UInt8], Int) throws -> Void) { self.write = write }

    package var failed: Bool { lock.withLock { error != nil } }

    /// Encodes (outside the lock, in parallel with the others), then writes under the lock; keeps
    /// the first error.
    package func run(_ encode: () throws -> (bytes: [UInt8], records: Int)) {
        do {
            let (bytes, records) = try encode()
            try lock.withLock {
                guard error == nil else { return }
                try write(bytes, records)
            }
        } catch {
            lock.withLock { if self.error == nil { self.error = error } }
        }
    }

    package func check() throws {
        if let error = lock.withLock({ error }) { throw error }
    }
}
