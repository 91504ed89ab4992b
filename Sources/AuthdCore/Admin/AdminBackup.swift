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

    /// A backup file as read: its head, and `snapshot.json`'s bytes in base64 (written last, as a
    /// stream, by ``writeBundle(to:state:seq:keys:inBackground:)``).
    struct Bundle: Decodable {
        var head: BundleHead
        var snapshot: String

        private enum CodingKeys: String, CodingKey { case snapshot }

        init(from decoder: any Decoder) throws {
            head = try BundleHead(from: decoder)
            snapshot = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .snapshot)
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

    /// Loads a backup or export into an empty store and its keys (a database backend: `authd import`).
    /// - Returns: a one-line summary.
    static func importBundle(
        from path: String, store: any AuthStore, keys: any ServerKeys, logger: Logger, progress: @escaping AdminProgressSink = { _ in }
    ) async throws -> String {
        progress(AdminProgress(phase: "reading \(URL(fileURLWithPath: path).lastPathComponent)", done: 0, unit: "records"))
        let (bundle, _, changes, files) = try read(path)
        let counts = try await store.counts()
        guard counts.users == 0, counts.sessions == 0 else {
            throw AdminError("the store already holds \(counts.users) users and \(counts.sessions) sessions: import only into an empty one")
        }
        // Users before what refers to them (sessions, approvals).
        let ordered = changes.filter { if case .putUser = $0 { true } else { false } } + changes.filter { if case .putUser = $0 { false } else { true } }
        try await keys.importFiles(files, logger: logger)
        let total = ordered.count
        progress(AdminProgress(phase: "storing", done: 0, unit: "records", total: total))
        try await store.load(ordered) { done in progress(AdminProgress(phase: "storing", done: done, unit: "records", total: total)) }
        return "\(bundle.head.users) users, \(bundle.head.sessions) sessions and \(files.count) keys and secrets imported (export of \(bundle.head.createdAt))"
    }

    /// Reads and checks a backup file: every snapshot record must decode.
    /// - Parameter decodingChanges: false to check the records without keeping them (`changes` is then empty).
    static func read(_ path: String, decodingChanges: Bool = true) throws -> (bundle: Bundle, snapshot: [UInt8], changes: [StoreChange], keys: [String: [UInt8]]) {
        guard let raw = try DurableFile.read(path) else { throw AdminError("cannot read \(path)") }
        let bundle: Bundle
        do { bundle = try JSONDecoder().decode(Bundle.self, from: Data(raw)) } catch {
            throw AdminError("\(path) is not an authd backup")
        }
        guard bundle.head.format == "authd-backup", bundle.head.version == 1 else { throw AdminError("\(path) is not an authd backup of a version this build reads") }
        guard let decoded = Data(base64Encoded: bundle.snapshot) else { throw AdminError("\(path): the snapshot is damaged") }
        let snapshot = Array(decoded)
        let changes = try SnapshotFile.decodeChunks(snapshot, path: path, keep: decodingChanges).chunks.flatMap { $0 }
        var keys: [String: [UInt8]] = [:]
        for (name, value) in bundle.head.keys {
            // Only plain file names: a backup must not write outside keys/.
            guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("."), let bytes = Data(base64Encoded: value) else {
                throw AdminError("\(path): a key file entry is damaged")
            }
            keys[name] = Array(bytes)
        }
        return (bundle, snapshot, changes, keys)
    }

    /// Replaces the store and keys of `dataFolder` (created if missing) with a backup's. Refuses
    /// while a server holds the folder. Nothing is touched until the whole backup has been read and checked.
    /// - Returns: a one-line summary.
    package static func restore(from path: String, to dataFolder: String) throws -> String {
        let (bundle, snapshot, _, keys) = try read(path, decodingChanges: false)  // checked before anything is replaced

        try DurableFile.makeDirectory(dataFolder, mode: 0o700)
        let lock = try DataFolderLock(folder: dataFolder)
        defer { lock.release() }
        let keyPath = dataFolder + "/keys"
        try DurableFile.makeDirectory(keyPath, mode: 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: keyPath) where keys[name] == nil {
            try DurableFile.check(unlink(keyPath + "/" + name), "unlink", keyPath + "/" + name)
        }
        for (name, bytes) in keys { try DurableFile.replace(keyPath + "/" + name, with: bytes, mode: 0o600) }
        try DurableFile.replace(dataFolder + "/snapshot.json", with: snapshot, mode: 0o600)
        for name in try FileManager.default.contentsOfDirectory(atPath: dataFolder) where name.hasPrefix("journal-") && name.hasSuffix(".jsonl") {
            try DurableFile.check(unlink(dataFolder + "/" + name), "unlink", dataFolder + "/" + name)
        }
        try DurableFile.syncDirectory(dataFolder)
        return "\(bundle.head.users) users, \(bundle.head.sessions) sessions and \(keys.count) key files restored into \(dataFolder) (backup of \(bundle.head.createdAt))"
    }

    /// The message of an admin failure, for the CLI.
    package static func message(of error: any Error) -> String {
        (error as? AdminError)?.message ?? "\(error)"
    }
}
