@testable import AuthdCore
@testable import AuthdServer
@testable import FileStore
@testable import AuthStorage
@testable import AuthKernel
import AuthKernelTesting
import Foundation
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

    @Test func aStreamedBundleReadsBackWithEveryRecordAndKey() throws {
        var state = StoreState()
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<2000 {
            let u = UserRecord(email: "u\(i)@example.com", displayName: i == 7 ? "Zoë \"🦊\"" : nil, createdAt: t)
            state.put(u)
            if i % 4 == 0 { state.put(SessionRecord(userID: u.id, deviceName: nil, platform: nil, amr: ["otp"], createdAt: t, expiresAt: t + 60, refreshHash: "h\(i)")) }
        }
        let keys: [String: [UInt8]] = ["signing-1.key": Array(repeating: 7, count: 64), "pepper": [1, 2, 3]]
        for inBackground in [true, false] {
            let path = temporaryFolder() + "/backup.json"
            try AdminBackup.writeBundle(to: path, state: state, seq: 42, keys: keys, inBackground: inBackground)
            let (bundle, _, changes, readKeys) = try AdminBackup.read(path)
            #expect(bundle.head.users == 2000 && bundle.head.sessions == 500)
            #expect(readKeys == keys)
            var restored = StoreState()
            for change in changes { restored.apply(change) }
            #expect(restored.users == state.users && restored.sessions == state.sessions)
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func aRestoreChecksEveryRecordWithoutKeepingThemAndRefusesADamagedOne() throws {
        var state = StoreState()
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<3000 { state.put(UserRecord(email: "u\(i)@example.com", createdAt: t)) }
        let path = temporaryFolder() + "/backup.json"
        try AdminBackup.writeBundle(to: path, state: state, seq: 1, keys: ["pepper": [1]], inBackground: true)
        let checked = try AdminBackup.read(path, decodingChanges: false)
        #expect(checked.changes.isEmpty && checked.bundle.head.users == 3000)
        #expect(try SnapshotFile.decode(checked.snapshot, path: "snapshot.json").changes.count == 3000)

        // One record damaged deep inside: the check must still find it, and restore must touch nothing.
        var snapshot = checked.snapshot
        let at = snapshot.indices.filter { snapshot[$0] == UInt8(ascii: "\n") }[2000] + 1
        snapshot[at] = UInt8(ascii: "#")
        var bundle = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        bundle["snapshot"] = Data(snapshot).base64EncodedString()
        try JSONSerialization.data(withJSONObject: bundle).write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { try AdminBackup.read(path, decodingChanges: false) }
        let target = temporaryFolder() + "/restored"
        #expect(throws: StoreError.self) { try AdminBackup.restore(from: path, to: target) }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
