@testable import FileStore
@testable import AuthStorage
@testable import AuthKernel
import Foundation
import Testing

/// Start-up builds the state from a snapshot table by table, side by side; it must equal applying
/// the records one by one.
struct StoreStateLoadingTests {
    func records() -> [StoreChange] {
        var out: [StoreChange] = []
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<500 {
            let user = UserRecord(
                email: i % 5 == 0 ? nil : "u\(i)@example.com", username: i % 3 == 0 ? "Name\(i)" : nil,
                identities: [Identity(provider: "email", subject: "u\(i)"), Identity(provider: "apple", subject: "a\(i)")], createdAt: t
            )
            out.append(.putUser(user))
            for j in 0..<(i % 3) {
                var s = SessionRecord(userID: user.id, deviceName: nil, platform: nil, amr: ["pin"], createdAt: t, expiresAt: t + 3600, refreshHash: "h\(i)-\(j)")
                s.retired = [RetiredRefreshToken(hash: "old\(i)-\(j)", retiredAt: t)]
                out.append(.putSession(s))
            }
        }
        out.append(.putCode(CodeRecord(purpose: "email_sign_in", key: "u1@example.com", digest: "d", sentAt: t, expiresAt: t + 600)))
        return out
    }

    func expectSame(_ a: StoreState, _ b: StoreState) {
        #expect(a.users == b.users)
        #expect(a.sessions == b.sessions)
        #expect(a.codes == b.codes)
        for u in a.users.values {
            if let email = u.email { #expect(b.user(email: email)?.id == u.id) }
            if let name = u.username { #expect(b.user(username: name.uppercased())?.id == u.id) }
            for identity in u.identities { #expect(b.user(identity: identity)?.id == u.id) }
            #expect(Set(a.sessions(userID: u.id).map(\.id)) == Set(b.sessions(userID: u.id).map(\.id)))
        }
        for s in a.sessions.values {
            for h in s.refreshHashes + s.retired.map(\.hash) { #expect(b.session(refreshHash: h)?.id == s.id) }
        }
    }

    func applied(_ records: [StoreChange]) -> StoreState {
        var state = StoreState()
        for r in records { state.apply(r) }
        return state
    }

    @Test func snapshotLinesAreFoundWithOrWithoutATrailingNewline() {
        let text = Array("head\n\na\nbb\n\nccc".utf8)
        let lines = SnapshotFile.lineRanges(text, from: 5).map { String(decoding: text[$0], as: UTF8.self) }
        #expect(lines == ["a", "bb", "ccc"])
        #expect(SnapshotFile.lineRanges(Array("h\nx\n".utf8), from: 2) == [2..<3])
        #expect(SnapshotFile.lineRanges(Array("h\n".utf8), from: 2).isEmpty)
        #expect(SnapshotFile.lineRanges([], from: 0).isEmpty)
    }

    @Test func loadingASnapshotEqualsApplyingItInOrder() {
        let records = records()
        // In chunks, as the snapshot decoder hands them over.
        let loaded = StoreState.loading(snapshot: [Array(records[..<300]), Array(records[300...])])
        expectSame(applied(records), loaded)
        #expect(loaded.users.count == 500)
        #expect(loaded.pending.isEmpty)
        // Lookups that must miss still miss.
        #expect(loaded.user(email: "u0@example.com") == nil)
        #expect(loaded.session(refreshHash: "nope") == nil)
    }

    @Test func anythingButDistinctPutsIsAppliedInOrder() {
        var records = records()
        // The same user twice with a new email: the old email must no longer find it.
        guard case .putUser(var first) = records[1] else { Issue.record("expected a user"); return }
        first.email = "changed@example.com"
        records.append(.putUser(first))
        let loaded = StoreState.loading(snapshot: [records])
        expectSame(applied(records), loaded)
        #expect(loaded.user(email: "u1@example.com") == nil)
        #expect(loaded.user(email: "changed@example.com")?.id == first.id)

        records.append(.deleteUser(first.id))
        let afterDelete = StoreState.loading(snapshot: [records])
        expectSame(applied(records), afterDelete)
        #expect(afterDelete.users[first.id] == nil)
    }
}
