@testable import AuthdCore
@testable import AuthdServer
@testable import FileStore
@testable import AuthStorage
@testable import AuthKernel
import AuthKernelTesting
import Foundation
import Logging
import Synchronization
import Testing

/// The backup file is written as a stream (the snapshot as base64, part by part): it must read back whole.
struct AdminBackupTests {
    @Test func base64InPiecesEqualsBase64OfTheWhole() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let pieces = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                (0..<Int.random(in: 0...10, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            var stream = Base64Stream()
            let streamed = pieces.flatMap { stream.encode($0) } + stream.finish()
            #expect(streamed == Array(Data(pieces.flatMap { $0 }).base64EncodedData()))
        }
    }

    static func state(users: Int, sessionsEvery: Int = 4) -> StoreState {
        var state = StoreState()
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<users {
            let u = UserRecord(email: "u\(i)@example.com", displayName: i == 7 ? "Zoë \"🦊\" /x/" : nil, createdAt: t)
            state.put(u)
            if i % sessionsEvery == 0 { state.put(SessionRecord(userID: u.id, deviceName: nil, platform: nil, amr: ["otp"], createdAt: t, expiresAt: t + 60, refreshHash: "h\(i)")) }
        }
        return state
    }

    /// Every batch of `reader`'s records, applied in order.
    static func read(_ reader: BundleReader, batchLines: Int = 20_000, only: ((ArraySlice<UInt8>) -> Bool)? = nil) async throws -> (StoreState, [Int]) {
        let collected = Mutex<(StoreState, [Int])>((StoreState(), []))
        try await reader.forEachRecordBatch(only: only, batchLines: batchLines) { batch in
            collected.withLock { for change in batch { $0.0.apply(change) }; $0.1.append(batch.count) }
        }
        return collected.withLock { $0 }
    }

    @Test func aStreamedBundleReadsBackWithEveryRecordAndKeyWhateverTheReadSize() async throws {
        let state = Self.state(users: 2000)
        let keys: [String: [UInt8]] = ["signing-1.key": Array(repeating: 7, count: 64), "pepper": [1, 2, 3]]
        for inBackground in [true, false] {
            let path = temporaryFolder() + "/backup.json"
            try AdminBackup.writeBundle(to: path, state: state, seq: 42, keys: keys, inBackground: inBackground)
            // Parts that cut lines, base64 groups and the closing quote anywhere.
            for readSize in [4 << 20, 1000, 4099] {
                let reader = try BundleReader(path, readSize: readSize)
                #expect(reader.head.users == 2000 && reader.head.sessions == 500)
                #expect(reader.keys == keys)
                let (restored, batches) = try await Self.read(reader, batchLines: 300)
                #expect(restored.users == state.users && restored.sessions == state.sessions)
                #expect(batches.allSatisfy { $0 <= 300 } && batches.reduce(0, +) == 2500)
            }
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func theUsersComeFirstWhenAskedForAndTheRestAfter() async throws {
        let path = temporaryFolder() + "/backup.json"
        try AdminBackup.writeBundle(to: path, state: Self.state(users: 500, sessionsEvery: 1), seq: 1, keys: [:], inBackground: false)
        let reader = try BundleReader(path, readSize: 2048)
        let (users, _) = try await Self.read(reader, only: AdminBackup.isUser)
        #expect(users.users.count == 500 && users.sessions.isEmpty)
        let (rest, _) = try await Self.read(reader, only: { !AdminBackup.isUser($0) })
        #expect(rest.users.isEmpty && rest.sessions.count == 500)
    }

    /// The bundle's text with its snapshot replaced by `snapshot`'s base64 (as `transform` leaves it).
    static func rewrite(_ path: String, _ change: (inout [UInt8]) -> Void, base64: (String) -> String = { $0 }) async throws {
        let reader = try BundleReader(path)
        var snapshot: [UInt8] = []
        try await reader.forEachSnapshotPart { snapshot += $0 }
        change(&snapshot)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let start = try #require(text.range(of: #","snapshot":""#))
        try (text[..<start.upperBound] + base64(Data(snapshot).base64EncodedString()) + "\"}").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func aRestoreChecksEveryRecordFirstAndADamagedOneTouchesNothing() async throws {
        let path = temporaryFolder() + "/backup.json"
        try AdminBackup.writeBundle(to: path, state: Self.state(users: 3000, sessionsEvery: 1_000_000), seq: 1, keys: ["pepper": [1]], inBackground: true)
        // A JSON writer may escape "/" as "\/": still the same bundle.
        try await Self.rewrite(path, { _ in }, base64: { $0.replacingOccurrences(of: "/", with: "\\/") })
        let good = temporaryFolder() + "/restored"
        #expect(try await AdminBackup.restore(from: path, to: good).hasPrefix("3000 users"))
        let store = try await JournalStore.open(folder: good, compactAfterBytes: 1 << 30, logger: .init(label: "test"))
        #expect(await store.counts().users == 3000)
        await store.close()

        // One record damaged deep inside: the check must still find it, and restore must touch nothing.
        try await Self.rewrite(path) { snapshot in
            let at = snapshot.indices.filter { snapshot[$0] == UInt8(ascii: "\n") }[2000] + 1
            snapshot[at] = UInt8(ascii: "#")
        }
        let target = temporaryFolder() + "/restored"
        await #expect(performing: { try await AdminBackup.restore(from: path, to: target) }, throws: { error in
            if case StoreError.corrupt(_, let line?, _) = error { line == 2002 } else { false }
        })
        #expect(!FileManager.default.fileExists(atPath: target))

        // Cut short: refused, nothing touched.
        try AdminBackup.writeBundle(to: path, state: Self.state(users: 3000), seq: 1, keys: ["pepper": [1]], inBackground: true)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try String(text.dropLast(100)).write(toFile: path, atomically: true, encoding: .utf8)
        await #expect(throws: AdminError.self) { try await AdminBackup.restore(from: path, to: target) }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
