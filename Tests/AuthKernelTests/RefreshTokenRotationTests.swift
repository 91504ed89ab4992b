@testable import AuthStorage
@testable import AuthKernel
import Foundation
import Testing

struct RefreshTokenRotationTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func session() -> SessionRecord {
        SessionRecord(userID: UUID(), deviceName: nil, platform: nil, amr: ["email"], createdAt: t0, expiresAt: t0.addingTimeInterval(1000), refreshHash: "a")
    }

    func rotate(_ s: SessionRecord, _ presented: String, _ new: String, at seconds: Double) -> RefreshTokenRotation.Outcome {
        RefreshTokenRotation.rotate(s, presented: presented, newHash: new, now: t0.addingTimeInterval(seconds), grace: 10, ttl: 1000)
    }

    @Test func currentTokenRotates() throws {
        guard case .rotated(let s) = rotate(session(), "a", "b", at: 5) else { Issue.record("not rotated"); return }
        #expect(s.refreshHashes == ["b"])
        #expect(s.retired.map(\.hash) == ["a"])
        #expect(s.expiresAt == t0.addingTimeInterval(1005))
        #expect(s.lastUsedAt == t0.addingTimeInterval(5))
    }

    @Test func retiredTokenWithinGraceSucceedsAndKeepsBothAnswersValid() throws {
        guard case .rotated(let s1) = rotate(session(), "a", "b", at: 0),
            case .rotated(let s2) = rotate(s1, "a", "c", at: 10)
        else { Issue.record("not rotated"); return }
        #expect(s2.refreshHashes == ["b", "c"])
        // Whichever answer the device kept works once; the sibling then retires.
        guard case .rotated(let s3) = rotate(s2, "c", "d", at: 20) else { Issue.record("not rotated"); return }
        #expect(s3.refreshHashes == ["d"])
        #expect(rotate(s3, "b", "e", at: 31) == .reused)
    }

    @Test func a100WayRaceInsideTheGraceKeepsEveryAnswerValid() throws {
        guard case .rotated(var s) = rotate(session(), "a", "first", at: 0) else { Issue.record("not rotated"); return }
        for i in 0..<99 {
            guard case .rotated(let next) = rotate(s, "a", "racer\(i)", at: 1) else { Issue.record("racer \(i) refused"); return }
            s = next
        }
        #expect(s.refreshHashes.count == 100)
        // The device kept any one of the answers: each still rotates, and that ends the race.
        guard case .rotated(let after) = rotate(s, "racer42", "next", at: 100) else { Issue.record("answer refused"); return }
        #expect(after.refreshHashes == ["next"])
        // The newest answers are the ones remembered, in the order they were given.
        #expect(after.retired.map(\.hash) == Array(s.refreshHashes.suffix(RefreshTokenRotation.retiredLimit)))
        #expect(rotate(after, "racer98", "x", at: 200) == .reused)
    }

    @Test func retiredTokenAfterGraceIsReuse() {
        guard case .rotated(let s1) = rotate(session(), "a", "b", at: 0) else { Issue.record("not rotated"); return }
        #expect(rotate(s1, "a", "c", at: 10.5) == .reused)
    }

    @Test func expiredSessionAndUnknownToken() {
        #expect(rotate(session(), "a", "b", at: 1000) == .expired)
        #expect(rotate(session(), "zzz", "b", at: 1) == .unknown)
    }

    @Test func memoryOfRetiredTokensIsBounded() {
        var s = session()
        var current = "a"
        for i in 0..<100 {
            guard case .rotated(let next) = rotate(s, current, "t\(i)", at: Double(i)) else { Issue.record("not rotated"); return }
            s = next
            current = "t\(i)"
        }
        #expect(s.retired.count == RefreshTokenRotation.retiredLimit)
        // The oldest are forgotten first: the last 16 presented remain, oldest first.
        #expect(s.retired.map(\.hash) == (83..<99).map { "t\($0)" })
        #expect(s.retired.map(\.retiredAt) == (84..<100).map { t0.addingTimeInterval(Double($0)) })
    }
}

struct SessionTokenIndexTests {
    /// A store holding one user with one session whose refresh token hashes to "h0".
    func stateWithOneSession(now: Date) -> (StoreState, SessionRecord) {
        var state = StoreState()
        let user = UserRecord(isAnonymous: true, createdAt: now)
        state.put(user)
        let session = SessionRecord(
            userID: user.id, deviceName: nil, platform: nil, amr: ["t"], createdAt: now, expiresAt: now.addingTimeInterval(3600), refreshHash: "h0")
        state.put(session)
        return (state, session)
    }

    @Test func rotationsKeepTheIndexExactAsRetiredTokensComeAndGo() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var (state, session) = stateWithOneSession(now: now)
        // The same rotations as whole records, as journals written before `rotate_session` hold them.
        var replayed = state
        var all = ["h0"]
        for i in 1...40 {
            guard case .rotated(let next) = RefreshTokenRotation.rotate(
                session, presented: all.last!, newHash: "h\(i)", now: now.addingTimeInterval(Double(i)), grace: 10, ttl: 3600)
            else { Issue.record("rotation \(i) failed"); return }
            session = next
            state.put(session)
            replayed.apply(.putSession(session))
            all.append("h\(i)")
        }
        // The current token and the 16 retired ones find the session; older ones are forgotten.
        let known = Set(session.refreshHashes + session.retired.map(\.hash))
        #expect(known.count == 1 + RefreshTokenRotation.retiredLimit)
        for h in all { #expect((state.session(refreshHash: h)?.id == session.id) == known.contains(h), "\(h)") }
        for h in all { #expect((replayed.session(refreshHash: h)?.id == session.id) == known.contains(h), "\(h)") }
        #expect(replayed.session(id: session.id) == session)
        state.deleteSession(id: session.id)
        for h in all { #expect(state.session(refreshHash: h) == nil) }
    }

    @Test func theIndexStaysExactThroughGraceRetriesAndArbitraryReplacements() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var (state, session) = stateWithOneSession(now: now)
        var seen: Set<String> = ["h0"]
        func check(_ step: String) {
            let known = Set(session.refreshHashes + session.retired.map(\.hash))
            for h in seen { #expect((state.session(refreshHash: h)?.id == session.id) == known.contains(h), "\(step): \(h)") }
        }
        var n = 0
        for i in 1...60 {
            n += 1
            let newHash = "n\(n)"
            // Mostly the current token; every third time a retired one inside the grace period (a
            // client retrying), which keeps several current hashes.
            let presented = i % 3 == 0 ? (session.retired.last?.hash ?? session.refreshHashes[0]) : session.refreshHashes.last!
            guard case .rotated(let next) = RefreshTokenRotation.rotate(
                session, presented: presented, newHash: newHash, now: now, grace: 60, ttl: 3600)
            else { Issue.record("rotation \(i) failed"); return }
            session = next
            state.put(session)
            seen.insert(newHash)
            check("rotation \(i)")
            if i % 20 == 0 {
                // A put that is no rotation at all: every hash replaced.
                n += 1
                session.refreshHashes = ["x\(n)"]
                session.retired = [RetiredRefreshToken(hash: "y\(n)", retiredAt: now)]
                seen.formUnion(["x\(n)", "y\(n)"])
                state.put(session)
                check("replacement \(i)")
            }
        }
    }
}
