import AuthStorage
import FileStore
import Foundation

/// Reads a backup or export file (``AdminBackup``) as a stream: the head whole, then the snapshot's
/// lines a batch at a time, base64-decoded as they are read. Read whole, a million users' 805 MB
/// bundle held its text, its decoded snapshot and every decoded record at once: 4.1 GB at the peak.
///
/// Every bundle authd writes has the snapshot last (`{…head…,"snapshot":"BASE64"}`) and the
/// snapshot in format 2 (a header line, then one record per line).
struct BundleReader {
    let path: String
    /// Everything in the file but the snapshot.
    let head: AdminBackup.BundleHead
    /// The key files, by name, checked to be plain names.
    let keys: [String: [UInt8]]
    /// Where the snapshot's base64 starts.
    private let snapshotOffset: UInt64

    /// Bytes read from the file at a time.
    let readSize: Int
    /// The head is a few kilobytes of keys: a file without the snapshot field early on is not a bundle.
    static let maxHead = 16 << 20
    private static let marker = Array(#""snapshot""#.utf8)

    /// Opens `path` and reads its head.
    /// - Throws: ``AdminError`` when it is not a bundle this build reads.
    init(_ path: String, readSize: Int = 4 << 20) throws {
        self.path = path
        self.readSize = readSize
        guard let file = FileHandle(forReadingAtPath: path) else { throw AdminError("cannot read \(path)") }
        defer { try? file.close() }
        var prefix: [UInt8] = []
        var found: (key: Int, value: Int)?
        var searchFrom = 0
        while found == nil, prefix.count < Self.maxHead {
            guard let data = try file.read(upToCount: 1 << 16), !data.isEmpty else { break }
            prefix += data
            while found == nil, let key = Self.find(Self.marker, in: prefix, from: searchFrom) {
                // `"snapshot"`, then `:` and the string's opening quote, with any JSON whitespace between.
                var i = key + Self.marker.count
                func skipSpace() { while i < prefix.count, [0x20, 0x09, 0x0A, 0x0D].contains(prefix[i]) { i += 1 } }
                skipSpace()
                guard i < prefix.count else { break }  // the rest is in the next read
                guard prefix[i] == UInt8(ascii: ":") else { searchFrom = key + 1; continue }
                i += 1
                skipSpace()
                guard i < prefix.count else { break }
                guard prefix[i] == UInt8(ascii: "\"") else { searchFrom = key + 1; continue }
                found = (key, i + 1)
            }
        }
        guard let found else { throw AdminError("\(path) is not an authd backup") }
        // The head is the object up to the snapshot's key, without the comma before it.
        var end = found.key
        while end > 0, [0x20, 0x09, 0x0A, 0x0D].contains(prefix[end - 1]) { end -= 1 }
        if end > 0, prefix[end - 1] == UInt8(ascii: ",") { end -= 1 }
        let head: AdminBackup.BundleHead
        do { head = try JSONDecoder().decode(AdminBackup.BundleHead.self, from: Data(prefix[..<end] + [UInt8(ascii: "}")])) } catch {
            throw AdminError("\(path) is not an authd backup")
        }
        guard head.format == "authd-backup", head.version == 1 else { throw AdminError("\(path) is not an authd backup of a version this build reads") }
        var keys: [String: [UInt8]] = [:]
        for (name, value) in head.keys {
            // Only plain file names: a backup must not write outside keys/.
            guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("."), let bytes = Data(base64Encoded: value) else {
                throw AdminError("\(path): a key file entry is damaged")
            }
            keys[name] = Array(bytes)
        }
        self.head = head
        self.keys = keys
        snapshotOffset = UInt64(found.value)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0], Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }

    /// Hands the snapshot's bytes to `body` as they are decoded, a few megabytes at a time.
    /// - Throws: ``AdminError`` when the base64 or the end of the file is damaged.
    func forEachSnapshotPart(_ body: ([UInt8]) async throws -> Void) async throws {
        guard let file = FileHandle(forReadingAtPath: path) else { throw AdminError("cannot read \(path)") }
        defer { try? file.close() }
        try file.seek(toOffset: snapshotOffset)
        var carry: [UInt8] = []
        var ended = false
        var after: [UInt8] = []
        while let data = try file.read(upToCount: readSize), !data.isEmpty {
            if ended {
                after += data.prefix(64)
                continue
            }
            var text = carry
            text.reserveCapacity(carry.count + data.count)
            for byte in data {
                if ended {
                    after.append(byte)
                } else if byte == UInt8(ascii: "\"") {
                    ended = true
                } else if byte != UInt8(ascii: "\\") {  // a JSON writer may escape "/" as "\/"
                    text.append(byte)
                }
            }
            let whole = ended ? text.count : text.count - text.count % 4
            carry = Array(text[whole...])
            guard whole > 0 else { continue }
            guard let decoded = Data(base64Encoded: Data(text[..<whole])) else { throw AdminError("\(path): the snapshot is damaged") }
            try await body(Array(decoded))
        }
        guard ended, carry.isEmpty, String(decoding: after, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("}") else {
            throw AdminError("\(path): the snapshot is damaged or cut short")
        }
    }

    /// Hands the snapshot's records to `body` in batches, decoded (on every core) or, with `keep`
    /// false, only checked; `only` picks the lines by their op before any decoding (users first:
    /// what refers to them is stored after). Checks the header and that the count of records is
    /// the one it gives. `read` hears the records read so far after each batch.
    /// - Returns: the records in the snapshot (all of them, whatever `only` picked).
    @discardableResult
    func forEachRecordBatch(
        keep: Bool = true, only: ((ArraySlice<UInt8>) -> Bool)? = nil, batchLines: Int = 20_000, read: (Int) -> Void = { _ in },
        _ body: ([StoreChange]) async throws -> Void
    ) async throws -> Int {
        var pending: [UInt8] = []
        var header: SnapshotFile.Header?
        var records = 0
        var lineNumber = 1
        func flush(_ bytes: [UInt8], _ ranges: [Range<Int>], firstLine: Int) async throws {
            let picked = only.map { pick in ranges.filter { pick(bytes[$0]) } } ?? ranges
            let changes = try SnapshotFile.decodeLines(bytes, picked, path: path, firstLine: firstLine, keep: keep)
            if keep, !changes.isEmpty { try await body(changes) }
            read(firstLine - 2 + ranges.count)
        }
        try await forEachSnapshotPart { part in
            pending += part
            var lines = SnapshotFile.lineRanges(pending, from: 0)
            // The last line may go on in the next part.
            if pending.last != 0x0A, let last = lines.popLast() { _ = last }
            let consumed = lines.last?.upperBound ?? 0
            if header == nil, let first = lines.first {
                guard let parsed = try? StoreCoding.decoder().decode(SnapshotFile.Header.self, from: Data(pending[first])),
                    parsed.format == SnapshotFile.currentFormat
                else { throw AdminError("\(path): the snapshot is not in a format this build streams") }
                header = parsed
                lines.removeFirst()
            }
            var start = 0
            while start < lines.count {
                let end = min(start + batchLines, lines.count)
                try await flush(pending, Array(lines[start..<end]), firstLine: lineNumber + 1)
                lineNumber += end - start
                records += end - start
                start = end
            }
            pending.removeFirst(consumed == 0 ? 0 : min(consumed + 1, pending.count))
        }
        let rest = SnapshotFile.lineRanges(pending, from: 0)
        if header == nil {
            guard let first = rest.first, let parsed = try? StoreCoding.decoder().decode(SnapshotFile.Header.self, from: Data(pending[first])),
                parsed.format == SnapshotFile.currentFormat
            else { throw AdminError("\(path): the snapshot is not in a format this build streams") }
            header = parsed
            try await flush(pending, Array(rest.dropFirst()), firstLine: lineNumber + 1)
            records += rest.count - 1
        } else if !rest.isEmpty {
            try await flush(pending, rest, firstLine: lineNumber + 1)
            records += rest.count
        }
        guard let header, header.records == records else {
            throw AdminError("\(path): the snapshot has \(records) records, its header says \(header?.records ?? 0)")
        }
        return records
    }
}
