import Dispatch
import Foundation

/// `snapshot.json`: the whole state as of one journal sequence number.
///
/// Format 2 (written now) is JSON lines: a header `{"format":2,"seq":N,"records":M}`, then one record
/// per line in the journal's own change encoding (`{"op":"put_user","user":{…}}`). Lines are encoded
/// and decoded in parallel chunks on every core: one JSON document of a million users took 12 s to
/// decode on one core. Format 1 (one JSON object) is still read.
enum SnapshotFile {
    struct Header: Codable {
        var format: Int
        var seq: UInt64
        var records: Int
    }

    static let currentFormat = 2

    /// Encodes the state (in parallel) as header + lines.
    static func encode(_ state: StoreState, seq: UInt64) throws -> [UInt8] {
        var changes: [StoreChange] = []
        changes.reserveCapacity(state.users.count + state.sessions.count + state.codes.count + state.approvals.count + state.jobs.count)
        changes += state.users.values.sorted { $0.createdAt < $1.createdAt }.map { .putUser($0) }
        changes += state.sessions.values.map { .putSession($0) }
        changes += state.codes.values.map { .putCode($0) }
        changes += state.approvals.values.map { .putApproval($0) }
        changes += state.jobs.values.map { .putJob($0) }
        let records = changes
        let chunks = chunkRanges(records.count)
        let parts = ParallelResults<[UInt8]>(count: chunks.count)
        DispatchQueue.concurrentPerform(iterations: chunks.count) { i in
            let encoder = StoreCoding.encoder()
            var w = JSONWriter(capacity: chunks[i].count * 400)
            do {
                for change in records[chunks[i]] {
                    try change.write(to: &w, fallback: encoder)
                    w.newline()
                }
                parts.set(i, .success(w.bytes))
            } catch {
                parts.set(i, .failure(error))
            }
        }
        var bytes = try [UInt8](StoreCoding.encoder().encode(Header(format: currentFormat, seq: seq, records: records.count)))
        bytes.append(0x0A)
        for part in try parts.values() { bytes += part }
        return bytes
    }

    /// Decodes either format into changes to apply, in file order, and the sequence number.
    static func decode(_ bytes: [UInt8], path: String) throws -> (seq: UInt64, changes: [StoreChange]) {
        let decoded = try decodeChunks(bytes, path: path)
        return (decoded.seq, decoded.chunks.flatMap { $0 })
    }

    /// Decodes either format into chunks of changes (in file order, chunk by chunk) and the sequence
    /// number. Start-up takes the chunks as they are: joining a million records into one array was
    /// another pass over all of them.
    static func decodeChunks(_ bytes: [UInt8], path: String) throws -> (seq: UInt64, chunks: [[StoreChange]]) {
        let firstNewline = bytes.firstIndex(of: 0x0A) ?? bytes.count
        let decoder = StoreCoding.decoder()
        if let header = try? decoder.decode(Header.self, from: Data(bytes[0..<firstNewline])), header.format == currentFormat {
            let lines = lineRanges(bytes, from: firstNewline + 1)
            guard lines.count == header.records else {
                throw StoreError.corrupt(path: path, line: nil, reason: "the snapshot has \(lines.count) records, its header says \(header.records)")
            }
            let chunks = chunkRanges(lines.count)
            let parts = ParallelResults<[StoreChange]>(count: chunks.count)
            DispatchQueue.concurrentPerform(iterations: chunks.count) { i in
                let decoder = StoreCoding.decoder()
                var out: [StoreChange] = []
                out.reserveCapacity(chunks[i].count)
                for index in chunks[i] {
                    // Users and sessions (nearly every record) by hand; anything else, or anything
                    // unexpected, through JSONDecoder.
                    if let fast = bytes.withUnsafeBufferPointer({ StoreChange.fastDecode(UnsafeBufferPointer(rebasing: $0[lines[index]])) }) {
                        out.append(fast)
                        continue
                    }
                    do {
                        out.append(try decoder.decode(StoreChange.self, from: Data(bytes[lines[index]])))
                    } catch {
                        parts.set(i, .failure(StoreError.corrupt(path: path, line: index + 2, reason: "not a valid snapshot record (\(error))")))
                        return
                    }
                }
                parts.set(i, .success(out))
            }
            return (header.seq, try parts.values())
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
        return (snapshot.seq, [changes])
    }

    /// The non-empty lines from `start` on. Runs before the parallel decoding, so it uses `memchr`: a
    /// byte loop over a million users' snapshot took 0.1-0.2 s of start-up by itself.
    static func lineRanges(_ bytes: [UInt8], from start: Int) -> [Range<Int>] {
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
    static func chunkRanges(_ count: Int) -> [Range<Int>] {
        let chunks = max(1, min(count / 1000, ProcessInfo.processInfo.activeProcessorCount * 4))
        let size = (count + chunks - 1) / max(chunks, 1)
        return stride(from: 0, to: max(count, 1), by: max(size, 1)).map { $0..<min($0 + max(size, 1), count) }
    }
}

/// Results written by parallel workers, each at its own index.
final class ParallelResults<T>: @unchecked Sendable {
    private var results: [Result<T, any Error>?]
    private let lock = NSLock()

    init(count: Int) { results = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ result: Result<T, any Error>) {
        lock.lock()
        results[index] = result
        lock.unlock()
    }

    func values() throws -> [T] {
        try results.map { try ($0 ?? .failure(StoreError.unavailable)).get() }
    }
}
