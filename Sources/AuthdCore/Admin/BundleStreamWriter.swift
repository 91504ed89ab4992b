import AuthKernel
import AuthStorage
import FileStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Writes an export's bundle as a store streams its records (``AuthStore/exportRecords(into:)``):
/// the head once the counts are known, then the snapshot's lines, base64, batch by batch, into a
/// temporary file that replaces the bundle only when every record is in (mode 0600, synced).
final class BundleStreamWriter: StoreExportSink {
    private struct State {
        var fd: Int32 = -1
        var base64 = Base64Stream()
        var done = 0
        var total = 0
        var users = 0
        var sessions = 0
    }
    private let state = Mutex(State())
    let path: String
    let keys: [String: [UInt8]]
    let progress: AdminProgressSink
    var temporary: String { path + ".tmp" }

    init(path: String, keys: [String: [UInt8]], progress: @escaping AdminProgressSink) {
        self.path = path
        self.keys = keys
        self.progress = progress
    }

    func begin(records: Int, users: Int, sessions: Int) throws {
        let head = AdminBackup.BundleHead(
            createdAt: Timestamp.string(Date()), users: users, sessions: sessions, keys: keys.mapValues { Data($0).base64EncodedString() })
        var opening = Array(try JSONEncoder().encode(head))
        guard opening.last == UInt8(ascii: "}") else { throw AdminError("could not encode the export's head") }
        opening.removeLast()
        opening += Array(#","snapshot":""#.utf8)
        let snapshotHeader = try SnapshotFile.header(records: records, seq: 0)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try DurableFile.check(fd, "open", temporary)
        try state.withLock { s in
            s.fd = fd
            (s.total, s.users, s.sessions) = (records, users, sessions)
            try DurableFile.writeAll(fd, opening + s.base64.encode(snapshotHeader), path: temporary)
        }
        progress(AdminProgress(phase: "exporting", done: 0, unit: "records", total: records))
    }

    func records(_ batch: [StoreChange]) throws {
        let lines = try SnapshotFile.lines(batch)
        let (done, total) = try state.withLock { s in
            try DurableFile.writeAll(s.fd, s.base64.encode(lines), path: temporary)
            s.done += batch.count
            return (s.done, s.total)
        }
        progress(AdminProgress(phase: "exporting", done: done, unit: "records", total: total))
    }

    /// Ends the file and puts it in place; the counts written.
    func finish() throws -> (users: Int, sessions: Int) {
        try state.withLock { s in
            guard s.fd >= 0 else { throw AdminError("the store handed over no records") }
            guard s.done == s.total else { throw AdminError("the store handed over \(s.done) of \(s.total) records") }
            try DurableFile.writeAll(s.fd, s.base64.finish() + Array(#""}"#.utf8), path: temporary)
            try DurableFile.sync(s.fd, path: temporary)
            close(s.fd)
            s.fd = -1
            try DurableFile.check(rename(temporary, path), "rename", path)
            try DurableFile.syncDirectory((path as NSString).deletingLastPathComponent)
            return (s.users, s.sessions)
        }
    }

    /// Drops the temporary file after a failure.
    func abandon() {
        state.withLock { s in
            if s.fd >= 0 { close(s.fd) }
            s.fd = -1
        }
        unlink(temporary)
    }
}
