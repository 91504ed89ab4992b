@testable import FileStore
@testable import AuthStorage
@testable import AuthKernel
import AuthKernelTesting
import Foundation
import Logging
import Testing

/// The usual refresh rotation is journalled as a ``SessionRotation``; it must rebuild exactly the
/// record a whole put would have stored, in memory, in the journal and after a crash.
struct SessionRotationTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func rotated(_ s: SessionRecord, presented: String, newHash: String, at seconds: Double, grace: Int = 10) -> SessionRecord? {
        guard case .rotated(let next) = RefreshTokenRotation.rotate(
            s, presented: presented, newHash: newHash, now: t0.addingTimeInterval(seconds), grace: grace, ttl: 3600)
        else { return nil }
        return next
    }

    func session(userID: UUID = UUID()) -> SessionRecord {
        SessionRecord(userID: userID, deviceName: "phone", platform: "ios", amr: ["email"], createdAt: t0, expiresAt: t0.addingTimeInterval(3600), refreshHash: "h0")
    }

    @Test func aUsualRotationBecomesARotationThatRebuildsTheRecord() throws {
        var s = session()
        for i in 1...40 {
            let next = try #require(rotated(s, presented: s.refreshHashes[0], newHash: "h\(i)", at: Double(i)))
            let rotation = try #require(SessionRotation(from: s, to: next))
            #expect(rotation.applied(to: s) == next)
            #expect(rotation.dropped == (i > RefreshTokenRotation.retiredLimit ? 1 : 0))
            s = next
        }
    }

    @Test func anythingElseIsNoRotation() throws {
        var s = session()
        for i in 1...3 { s = try #require(rotated(s, presented: s.refreshHashes[0], newHash: "h\(i)", at: Double(i))) }
        // A retry with a retired token inside the grace keeps the current hash beside the new one.
        let retry = try #require(rotated(s, presented: "h1", newHash: "r", at: 4))
        #expect(retry.refreshHashes.count == 2)
        #expect(SessionRotation(from: s, to: retry) == nil)
        // Other fields changed, or the hashes replaced outright.
        var renamed = try #require(rotated(s, presented: "h3", newHash: "h4", at: 5))
        renamed.deviceName = "laptop"
        #expect(SessionRotation(from: s, to: renamed) == nil)
        var replaced = s
        replaced.refreshHashes = ["x"]
        replaced.retired = [RetiredRefreshToken(hash: "y", retiredAt: t0)]
        #expect(SessionRotation(from: s, to: replaced) == nil)
        #expect(SessionRotation(from: s, to: s) == nil)
    }

    /// A store holding one user and its session (current token "h0"), with nothing pending.
    func storeWithSession() -> (StoreState, SessionRecord) {
        var (state, s) = SessionTokenIndexTests().stateWithOneSession(now: t0)
        _ = state.takeChanges()
        return (state, s)
    }

    @Test func theStoreRecordsRotationsAndReplayingThemGivesTheSameState() throws {
        var (state, s) = storeWithSession()
        let start = state
        var all = ["h0"]
        for i in 1...30 {
            // Every fifth a retry inside the grace (a whole record), otherwise the usual rotation.
            let presented = i % 5 == 0 ? s.retired.last!.hash : s.refreshHashes.last!
            s = try #require(rotated(s, presented: presented, newHash: "h\(i)", at: Double(i), grace: 60))
            state.put(s)
            all.append("h\(i)")
        }
        let changes = state.takeChanges()
        #expect(changes.count == 30)
        #expect(changes.filter { if case .rotateSession = $0 { true } else { false } }.count == 24)
        #expect(state.session(id: s.id) == s)

        var replayed = start
        for change in changes { replayed.apply(change) }
        #expect(replayed.session(id: s.id) == s)
        for h in all { #expect(replayed.session(refreshHash: h)?.id == state.session(refreshHash: h)?.id, "\(h)") }
        let known = Set(s.refreshHashes + s.retired.map(\.hash))
        for h in all { #expect((replayed.session(refreshHash: h) != nil) == known.contains(h), "\(h)") }
    }

    @Test func rowBackendsGetWholeRecords() throws {
        let (initial, s) = storeWithSession()
        var state = initial
        let next = try #require(rotated(s, presented: "h0", newHash: "h1", at: 1))
        state.put(next)
        var copy = state
        #expect(copy.takeChanges() == [.rotateSession(try #require(SessionRotation(from: s, to: next)))])
        #expect(state.takeChanges(wholeRecords: true) == [.putSession(next)])
        // Rotated, then deleted in the same write: the delete alone says it.
        state.put(try #require(rotated(next, presented: "h1", newHash: "h2", at: 2)))
        state.deleteSession(id: s.id)
        #expect(state.takeChanges(wholeRecords: true) == [.deleteSession(s.id)])
    }

    @Test func rotationLinesAreSmallAndReadBackAsWritten() throws {
        var s = session()
        for i in 1...20 { s = try #require(rotated(s, presented: s.refreshHashes[0], newHash: String(repeating: "\(i % 10)", count: 64), at: Double(i) + 0.123456)) }
        let next = try #require(rotated(s, presented: s.refreshHashes[0], newHash: String(repeating: "f", count: 64), at: 30.5))
        let change = StoreChange.rotateSession(try #require(SessionRotation(from: s, to: next)))
        let line = JournalLine(seq: 7, changes: [change])
        let fast = try line.encoded(with: StoreCoding.encoder())
        let whole = try JournalLine(seq: 7, changes: [.putSession(next)]).encoded(with: StoreCoding.encoder())
        #expect(fast.count < 400)
        #expect(fast.count * 5 < whole.count)
        // JSONDecoder, start-up's reader and JSONEncoder's own form all agree.
        #expect(try StoreCoding.decoder().decode(JournalLine.self, from: Data(fast)).changes == [change])
        #expect(fast.withUnsafeBufferPointer { JournalLine.fastDecode($0) }?.changes == [change])
        let encoded = try StoreCoding.encoder().encode(line)
        #expect(try JSONSerialization.jsonObject(with: Data(fast)) as? NSDictionary == JSONSerialization.jsonObject(with: encoded) as? NSDictionary)
        // A negative count is damage, not a rotation.
        let damaged = String(decoding: fast, as: UTF8.self).replacingOccurrences(of: "\"dropped\":1", with: "\"dropped\":-1")
        #expect(damaged != String(decoding: fast, as: UTF8.self))
        #expect(throws: DecodingError.self) { try StoreCoding.decoder().decode(JournalLine.self, from: Data(damaged.utf8)) }
        #expect(Array(damaged.utf8).withUnsafeBufferPointer { JournalLine.fastDecode($0) } == nil)
    }

    @Test func rotationsSurviveACrashAndACleanClose() async throws {
        let logger = Logger(label: "test")
        let folder = temporaryFolder()
        let store = try await JournalStore.open(folder: folder, logger: logger)
        let user = UserRecord(isAnonymous: true, createdAt: t0)
        var s = session(userID: user.id)
        try await store.write { [s] in $0.put(user); $0.put(s) }
        for i in 1...25 {
            s = try #require(rotated(s, presented: s.refreshHashes[0], newHash: "h\(i)", at: Double(i)))
            try await store.write { [s] in $0.put(s) }
        }
        let copy = temporaryFolder()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name != "authd.lock" {
            try FileManager.default.copyItem(atPath: folder + "/" + name, toPath: copy + "/" + name)
        }
        await store.close()
        for reopened in [copy, folder] {
            let again = try await JournalStore.open(folder: reopened, logger: logger)
            #expect(again.read { $0.session(id: s.id) } == s)
            #expect(again.read { $0.session(refreshHash: "h25")?.id } == s.id)
            #expect(again.read { $0.session(refreshHash: "h9")?.id } == s.id)
            #expect(again.read { $0.session(refreshHash: "h8") } == nil)  // fell off the retired list
            await again.close()
        }
    }
}
