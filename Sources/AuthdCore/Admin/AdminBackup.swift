import AuthKernel
import FileStore
import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging

/// `authd backup` and `authd restore`: one file (mode 0600) holding a consistent snapshot of the
/// store and every file of `keys/`. Without the keys a restored store could not verify PINs or
/// codes, nor would tokens already handed out verify, so they travel together; guard the file
/// like the data folder itself.
package enum AdminBackup {
    /// Everything in a backup file but the snapshot.
    struct BundleHead: Codable {
        var format = "authd-backup"
        var version = 1
        var createdAt: String
        var users: Int
        var sessions: Int
        /// File name in `keys/` → contents, base64.
        var keys: [String: String]

        enum CodingKeys: String, CodingKey {
            case format, version, createdAt = "created_at", users, sessions, keys
        }
    }

    /// Writes a backup of the running store (every acknowledged write is in it) and the keys.
    /// - Returns: a one-line summary.
    static func write(to path: String, store: JournalStore, keyFolder: KeyFolder, progress: @escaping AdminProgressSink = { _ in }) async throws -> String {
        let keys = try keyFolder.exportFiles()
        // On the store's snapshot thread, from the state as of one sequence number; the counts are that state's.
        let (users, sessions) = try await store.withSnapshot { state, seq in
            try writeBundle(to: path, state: state, seq: seq, keys: keys, inBackground: true, phase: "writing the backup", progress: progress)
            return (state.users.count, state.sessions.count)
        }
        return "\(users) users, \(sessions) sessions, \(keys.count) key files"
    }

    /// Writes an export of any store: every record and every key and secret in use, in the backup
    /// format (so `authd restore` or `authd import` reads it).
    /// - Returns: a one-line summary.
    static func export(to path: String, store: any AuthStore, keys: any ServerKeys, progress: @escaping AdminProgressSink = { _ in }) async throws -> String {
        // A database streams its records into the file; the file store's are in memory already.
        let streamed = BundleStreamWriter(path: path, keys: try await keys.exportFiles(), progress: progress)
        do {
            if try await store.exportRecords(into: streamed) {
                let (users, sessions) = try streamed.finish()
                return "\(users) users, \(sessions) sessions, \(streamed.keys.count) keys and secrets"
            }
        } catch {
            streamed.abandon()
            throw error
        }
        progress(AdminProgress(phase: "reading the store", done: 0, unit: "records"))
        let state = try await store.read([.allUsers, .allSessions, .allCodes, .allApprovals, .allJobs]) { $0 }
        let files = try await keys.exportFiles()
        try writeBundle(to: path, state: state, seq: 0, keys: files, inBackground: false, phase: "exporting", progress: progress)
        return "\(state.users.count) users, \(state.sessions.count) sessions, \(files.count) keys and secrets"
    }

    /// Writes the bundle file (mode 0600, replaced durably): the head through `JSONEncoder`, then the
    /// snapshot into its last field as base64, part by part as it is encoded. Built whole, a backup
    /// at a million users held the snapshot (280 MB), its base64 and the encoded bundle at once.
    ///
    /// - Parameter progress: told the records written after each part of the snapshot, under `phase`.
    static func writeBundle(
        to path: String, state: StoreState, seq: UInt64, keys: [String: [UInt8]], inBackground: Bool,
        phase: String = "writing", progress: AdminProgressSink = { _ in }
    ) throws {
        let head = BundleHead(
            createdAt: Timestamp.string(Date()), users: state.users.count, sessions: state.sessions.count,
            keys: keys.mapValues { Data($0).base64EncodedString() }
        )
        var opening = Array(try JSONEncoder().encode(head))
        guard opening.last == UInt8(ascii: "}") else { throw AdminError("could not encode the backup's head") }
        opening.removeLast()
        opening += Array(#","snapshot":""#.utf8)
        try DurableFile.replace(path, mode: 0o600) { write in
            try write(opening)
            var base64 = Base64Stream()
            let total = SnapshotFile.recordCount(state)
            var done = 0
            progress(AdminProgress(phase: phase, done: 0, unit: "records", total: total))
            try SnapshotFile.write(state, seq: seq, inBackground: inBackground, written: { records in
                done += records
                progress(AdminProgress(phase: phase, done: done, unit: "records", total: total))
            }) { try write(base64.encode($0)) }
            try write(base64.finish() + Array(#""}"#.utf8))
        }
    }

    /// Loads a backup or export into an empty store and its keys (a database backend: `authd import`),
    /// streaming the file: first every record is checked (a damaged bundle changes nothing), then the
    /// users are stored, then what refers to them, a batch at a time. A store built this way holds
    /// no more than a batch beyond its own records.
    /// - Returns: a one-line summary.
    static func importBundle(
        from path: String, store: any AuthStore, keys: any ServerKeys, logger: Logger, progress: @escaping AdminProgressSink = { _ in }
    ) async throws -> String {
        let bundle = try BundleReader(path)
        let counts = try await store.counts()
        guard counts.users == 0, counts.sessions == 0 else {
            throw AdminError(
                "the store already holds \(counts.users) users and \(counts.sessions) sessions: import only into an empty one (after an interrupted import, empty it first)")
        }
        let checking = "checking \(URL(fileURLWithPath: path).lastPathComponent)"
        progress(AdminProgress(phase: checking, done: 0, unit: "records"))
        let total = try await bundle.forEachRecordBatch(keep: false, read: { progress(AdminProgress(phase: checking, done: $0, unit: "records")) }) { _ in }
        try await keys.importFiles(bundle.keys, logger: logger)
        progress(AdminProgress(phase: "storing", done: 0, unit: "records", total: total))
        try await store.load(streaming: { load in
            // Users before what refers to them; the snapshot's parts come in no particular order.
            try await bundle.forEachRecordBatch(only: Self.isUser) { try await load($0) }
            try await bundle.forEachRecordBatch(only: { !Self.isUser($0) }) { try await load($0) }
        }, stored: { done in progress(AdminProgress(phase: "storing", done: done, unit: "records", total: total)) })
        return "\(bundle.head.users) users, \(bundle.head.sessions) sessions and \(bundle.keys.count) keys and secrets imported (export of \(bundle.head.createdAt))"
    }

    /// Whether a snapshot line stores a user: `{"op":"put_user",…}`, the journal's change encoding.
    static func isUser(_ line: ArraySlice<UInt8>) -> Bool {
        line.prefix(userOp.count).elementsEqual(userOp)
    }
    private static let userOp = Array(#"{"op":"put_user""#.utf8)

    /// Replaces the store and keys of `dataFolder` (created if missing) with a backup's. Refuses
    /// while a server holds the folder. Nothing is touched until every record of the backup has been
    /// read and checked; the snapshot is then written as it is decoded, never whole in memory.
    /// - Returns: a one-line summary.
    package static func restore(from path: String, to dataFolder: String) async throws -> String {
        let bundle = try BundleReader(path)
        try await bundle.forEachRecordBatch(keep: false) { _ in }  // checked before anything is replaced

        try DurableFile.makeDirectory(dataFolder, mode: 0o700)
        let lock = try DataFolderLock(folder: dataFolder)
        defer { lock.release() }
        let keyPath = dataFolder + "/keys"
        try DurableFile.makeDirectory(keyPath, mode: 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: keyPath) where bundle.keys[name] == nil {
            try DurableFile.check(unlink(keyPath + "/" + name), "unlink", keyPath + "/" + name)
        }
        for (name, bytes) in bundle.keys { try DurableFile.replace(keyPath + "/" + name, with: bytes, mode: 0o600) }
        let snapshot = dataFolder + "/snapshot.json"
        let temporary = snapshot + ".restoring"
        unlink(temporary)  // left by a restore that was cut short
        let fd = try DurableFile.openForWriting(temporary)
        do {
            try await bundle.forEachSnapshotPart { try DurableFile.writeAll(fd, $0, path: temporary) }
            try DurableFile.sync(fd, path: temporary)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        try DurableFile.check(rename(temporary, snapshot), "rename", snapshot)
        for name in try FileManager.default.contentsOfDirectory(atPath: dataFolder) where name.hasPrefix("journal-") && name.hasSuffix(".jsonl") {
            try DurableFile.check(unlink(dataFolder + "/" + name), "unlink", dataFolder + "/" + name)
        }
        try DurableFile.syncDirectory(dataFolder)
        return "\(bundle.head.users) users, \(bundle.head.sessions) sessions and \(bundle.keys.count) key files restored into \(dataFolder) (backup of \(bundle.head.createdAt))"
    }

    /// The message of an admin failure, for the CLI.
    package static func message(of error: any Error) -> String {
        (error as? AdminError)?.message ?? "\(error)"
    }
}
