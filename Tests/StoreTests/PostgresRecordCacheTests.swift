import AuthStorage
import Foundation
@testable import PostgresStore
import Synchronization
import Testing

/// The rules that keep an instance's cached records true (contract §19), on an injected clock.
struct PostgresRecordCacheTests {
    final class Clock: Sendable {
        let seconds = Mutex(1000.0)
        func advance(_ s: Double) { seconds.withLock { $0 += s } }
        var now: @Sendable () -> Double { { self.seconds.withLock { $0 } } }
    }

    static func user(_ id: UUID = UUID(), email: String = "ada@example.com") -> UserRecord {
        UserRecord(id: id, email: email, createdAt: Date(timeIntervalSince1970: 1_800_000_000))
    }

    static func row(_ user: UserRecord, version: Int64 = 1) -> VersionedRow {
        VersionedRow(key: .user(user.id), record: .putUser(user), version: version)
    }

    func cache(_ clock: Clock, capacity: Int = 100) -> PostgresRecordCache {
        PostgresRecordCache(capacity: capacity, maxAge: 5, heartbeatWindow: 2.5, now: clock.now)
    }

    @Test("Nothing is answered before the first heartbeat, nor after one goes missing, which drops everything")
    func answersOnlyWhileHeartbeatsArrive() {
        let clock = Clock(), cache = cache(clock), user = Self.user()
        cache.store(loaded: [Self.row(user)], since: cache.epoch)
        #expect(cache.state(for: [.user(user.id)]) == nil, "answered before any heartbeat")
        cache.heartbeat()
        #expect(cache.state(for: [.user(user.id)])?.user(id: user.id) == user)
        clock.advance(2)
        cache.heartbeat()
        clock.advance(2.4)
        #expect(cache.state(for: [.user(user.id)]) != nil, "a heartbeat 2.4 s ago is within the window")
        clock.advance(0.2)
        #expect(cache.state(for: [.user(user.id)]) == nil, "answered after a missed heartbeat")
        // The miss dropped the entries: a heartbeat alone does not bring them back.
        cache.heartbeat()
        #expect(cache.state(for: [.user(user.id)]) == nil)
        #expect(cache.count == 0)
    }

    @Test("An entry answers for at most the maximum age, and only keys a read may take from memory")
    func entriesAgeOut() {
        let clock = Clock(), cache = cache(clock), user = Self.user()
        cache.heartbeat()
        cache.store(loaded: [Self.row(user)], since: cache.epoch)
        clock.advance(1)
        cache.heartbeat()
        #expect(cache.state(for: [.user(user.id)]) != nil)
        #expect(cache.state(for: [.userByEmail("ada@example.com")]) == nil, "a lookup by email must go to the database")
        #expect(cache.state(for: [.user(user.id), .user(UUID())]) == nil, "a read with one key missing goes to the database whole")
        for _ in 0..<4 {
            clock.advance(1)
            cache.heartbeat()
        }
        #expect(cache.state(for: [.user(user.id)]) != nil, "5 s old: still within cache_max_age")
        clock.advance(0.5)
        cache.heartbeat()
        #expect(cache.state(for: [.user(user.id)]) == nil, "older than cache_max_age")
        // A write may still start from it: the database checks the version it read.
        #expect(cache.rows(for: [.user(user.id)]).rows.count == 1)
    }

    @Test("A load that raced with an invalidation does not put back what the invalidation removed")
    func aRacingLoadIsNotKept() {
        let clock = Clock(), cache = cache(clock), user = Self.user()
        cache.heartbeat()
        let began = cache.epoch
        // Another instance changed the user while this one's query was on its way.
        cache.invalidate([.user(user.id)])
        cache.store(loaded: [Self.row(user)], since: began)
        #expect(cache.state(for: [.user(user.id)]) == nil)
        // A load begun after the invalidation is kept.
        cache.store(loaded: [Self.row(user, version: 2)], since: cache.epoch)
        #expect(cache.state(for: [.user(user.id)]) != nil)
        // So is this instance's own write, at once, and an older load never replaces it.
        var renamed = user
        renamed.displayName = "Ada L."
        let before = cache.epoch
        cache.apply(written: [Self.row(renamed, version: 3)], deleted: [])
        cache.store(loaded: [Self.row(user, version: 2)], since: before)
        #expect(cache.state(for: [.user(user.id)])?.user(id: user.id)?.displayName == "Ada L.")
    }

    @Test("A deleted user takes its cached sessions; sessions are found by their current hashes, not by retired ones")
    func deletionsAndHashes() {
        let clock = Clock(), cache = cache(clock), user = Self.user()
        cache.heartbeat()
        func session(_ kind: SessionRecord.Kind?, hash: String) -> SessionRecord {
            var s = SessionRecord(userID: user.id, deviceName: nil, platform: nil, amr: ["pwd"], createdAt: Date(), expiresAt: Date(timeIntervalSinceNow: 3600), refreshHash: hash)
            s.kind = kind
            return s
        }
        let key = session(.apiKey, hash: "k"), browser = session(.browser, hash: "b"), app = session(nil, hash: "r")
        cache.store(loaded: [Self.row(user)] + [key, browser, app].map { VersionedRow(key: .session($0.id), record: .putSession($0), version: 1) }, since: cache.epoch)
        #expect(cache.state(for: [.sessionByRefreshHash("k")])?.session(refreshHash: "k")?.id == key.id)
        #expect(cache.state(for: [.sessionByRefreshHash("b")])?.session(refreshHash: "b")?.id == browser.id)
        #expect(cache.state(for: [.sessionByRefreshHash("r")])?.session(refreshHash: "r")?.id == app.id)
        // Rotated here: the new hash is found, the retired one goes to the database (reuse is decided there).
        var rotated = app
        rotated.refreshHashes = ["r2"]
        cache.apply(written: [VersionedRow(key: .session(app.id), record: .putSession(rotated), version: 2)], deleted: [])
        #expect(cache.state(for: [.sessionByRefreshHash("r2")])?.session(refreshHash: "r2")?.id == app.id)
        #expect(cache.state(for: [.sessionByRefreshHash("r")]) == nil, "a retired refresh token must be looked up in the database")
        cache.invalidate([.user(user.id)], deletedUsers: [user.id])
        for s in [key, browser, app] { #expect(cache.state(for: [.session(s.id)]) == nil) }
        #expect(cache.state(for: [.sessionByRefreshHash("k")]) == nil)
        #expect(cache.count == 0)
    }

    @Test("The cache holds at most its size, keeping what is used")
    func sizeIsBounded() {
        let clock = Clock(), cache = cache(clock, capacity: 10)
        cache.heartbeat()
        let kept = Self.user()
        cache.store(loaded: [Self.row(kept)], since: cache.epoch)
        for i in 0..<100 {
            cache.store(loaded: [Self.row(Self.user(email: "u\(i)@example.com"))], since: cache.epoch)
            _ = cache.state(for: [.user(kept.id)])  // used all along
            #expect(cache.count <= 10)
        }
        #expect(cache.state(for: [.user(kept.id)]) != nil)
        let off = PostgresRecordCache(capacity: 0, maxAge: 5, now: clock.now)
        off.heartbeat()
        off.store(loaded: [Self.row(kept)], since: off.epoch)
        #expect(off.count == 0 && off.state(for: [.user(kept.id)]) == nil, "cache_size 0 turns the cache off")
    }
}
