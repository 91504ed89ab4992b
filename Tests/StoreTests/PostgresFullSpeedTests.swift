import AuthdCore
import AuthKernel
import AuthKernelTesting
import AuthStorage
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import PostgresStore
import Synchronization
import Testing

/// Contract §19 against a real server: reads from memory with revocation carried by LISTEN/NOTIFY,
/// the hot writes in one round trip each (counted on the store's counting connection), bounded waits.
extension PostgresBackendTests {
    /// An instance and its store, as `authd serve` sets them up.
    func instanceAndStore(_ settings: AuthConfig.PostgresSettings, logs: LogCapture? = nil) async throws -> (TestHarness, PostgresStore) {
        let store = try await PostgresStore.open(settings, logger: logs?.logger() ?? logger)
        let keys = try await PostgresServerKeys.open(store: store, kek: kek, logger: logger)
        let h = try await TestHarness.make(
            config: Self.config, clock: ManualClock(), store: store, rateLimitCounters: PostgresRateLimitCounters(store: store), keys: keys,
            cluster: PostgresClusterEvents(store: store), decoyRecords: PostgresDecoyRecords(store: store))
        return (h, store)
    }

    /// Asks `ask` until it is true: at most 400 times, 25 ms apart (a bound that only catches a hang).
    static func eventually(_ ask: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<400 {
            if try await ask() { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    @Test("/me and codes are answered from memory; a change, a used code or a revocation on one instance reaches the other by notification, and the writer sees it at once")
    func readsFromMemoryAndNotificationsCarryChanges() async throws {
        var settings = try await StoreBackend.freshDatabase()
        // Entries would answer for a minute: only a notification can explain a refusal within seconds.
        settings.cacheMaxAge = 60
        let (a, storeA) = try await instanceAndStore(settings), (b, storeB) = try await instanceAndStore(settings)
        let runA = Task { try await a.server.run() }, runB = Task { try await b.server.run() }
        defer {
            runA.cancel()
            runB.cancel()
        }
        let ada = try await a.signIn("ada", email: "ada@example.com")
        let uid = try #require(UUID(uuidString: ada.user.id))
        try await a.test { one in
            try await b.test { two in
                func me(_ client: HarnessClient) async throws -> HarnessResponse {
                    try await client.send(.get, "/api/v1/auth/me", bearer: ada.accessToken)
                }
                // Once each listener's heartbeat is back, a second /me costs no round trip.
                for (client, store) in [(one, storeA), (two, storeB)] {
                    let fromMemory = try await Self.eventually { () async throws -> Bool in
                        #expect(try await me(client).status == .ok)
                        let before = store.roundTrips.count
                        #expect(try await me(client).status == .ok)
                        return store.roundTrips.count == before
                    }
                    #expect(fromMemory, "/me kept going to the database")
                }
                // A change on one instance: the writer answers with it at once, the other once notified.
                _ = try await a.kernel.users.update(uid) { $0.displayName = "Ada L." }
                #expect(try await me(one).json["display_name"] as? String == "Ada L.")
                #expect(try await Self.eventually { try await me(two).json["display_name"] as? String == "Ada L." })
                // A code likewise: read from memory on the other instance, gone there once used up here.
                let policy = CodePolicy(ttl: 600, resendInterval: 0, maxAttempts: 5, maxFailures: 5, failureWindow: 600)
                let code = try await a.kernel.codes.issue(purpose: "t", key: "ada@example.com", policy: policy, payload: ["n": .number(1)])
                #expect(try await b.kernel.codes.pendingPayload(purpose: "t", key: "ada@example.com") != nil)
                let before = storeB.roundTrips.count
                #expect(try await b.kernel.codes.pendingPayload(purpose: "t", key: "ada@example.com") != nil)
                #expect(storeB.roundTrips.count == before, "a code read again went to the database")
                try await a.kernel.codes.verify(purpose: "t", key: "ada@example.com", code: code, policy: policy)
                #expect(try await Self.eventually { try await b.kernel.codes.pendingPayload(purpose: "t", key: "ada@example.com") == nil })
                // A revocation likewise.
                let sid = try #require(await a.kernel.sessions.sessions(of: uid).first?.id)
                try await a.kernel.sessions.revoke(sid, of: uid)
                #expect(try await me(one).status == .unauthorized)
                #expect(try await Self.eventually { try await me(two).status == .unauthorized }, "the other instance kept answering a revoked session")
            }
        }
        await a.server.close()
        await b.server.close()
    }

    @Test("A refresh's rotation, a code's check-and-consume and a rate-limit check each take one round trip")
    func hotWritesTakeOneRoundTrip() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let (h, store) = try await instanceAndStore(settings)
        let ada = try await h.signIn("ada", email: "ada@example.com")
        func cost(_ work: () async throws -> Void) async throws -> Int {
            let before = store.roundTrips.count
            try await work()
            return store.roundTrips.count - before
        }
        #expect(try await cost { try await h.kernel.rateLimiter.consume(RateLimitRule(limit: 5, window: 60), key: "ip:192.0.2.1") } == 1)
        // A refresh: the lookup by the token's hash, the refresh rate limit, then the rotation, which
        // checks the version it read and writes the session in one call.
        var token = ada.refreshToken
        for _ in 0..<3 {
            var next = token
            #expect(try await cost { next = try await h.kernel.sessions.refresh(token).refreshToken } == 3)
            token = next
        }
        // The rotation alone, as the store sees it.
        let uid = try #require(UUID(uuidString: ada.user.id))
        let sid = try #require(await h.kernel.sessions.sessions(of: uid).first?.id)
        #expect(try await cost {
            try await store.write([.session(sid), .user(uid)]) { state in
                var session = try #require(state.session(id: sid))
                session.lastUsedAt = session.lastUsedAt.addingTimeInterval(1)
                state.put(session)
            }
        } == 1)
        // A code's check-and-consume: one call that checks the version and deletes it; a wrong code
        // counts its try in one call too.
        let policy = CodePolicy(ttl: 600, resendInterval: 0, maxAttempts: 5, maxFailures: 5, failureWindow: 600)
        let code = try await h.kernel.codes.issue(purpose: "t", key: "ada@example.com", policy: policy)
        let wrong = code == "000000" ? "111111" : "000000"
        #expect(try await cost { _ = try? await h.kernel.codes.verify(purpose: "t", key: "ada@example.com", code: wrong, policy: policy) } == 1)
        #expect(try await cost { try await h.kernel.codes.verify(purpose: "t", key: "ada@example.com", code: code, policy: policy) } == 1)
        await #expect(throws: AuthError.self) { try await h.kernel.codes.verify(purpose: "t", key: "ada@example.com", code: code, policy: policy) }
        await h.server.close()
    }

    @Test("A refresh starts from memory (two round trips: the rate limit, the rotation); a token rotated on another instance is still reuse there")
    func aRefreshStartsFromMemoryAndReuseAcrossInstancesIsCaught() async throws {
        var settings = try await StoreBackend.freshDatabase()
        // Reads trust an entry for a second; a rotation's lookup trusts it at any age.
        settings.cacheMaxAge = 1
        let (a, storeA) = try await instanceAndStore(settings), (b, _) = try await instanceAndStore(settings)
        let runA = Task { try await a.server.run() }, runB = Task { try await b.server.run() }
        defer {
            runA.cancel()
            runB.cancel()
        }
        let ada = try await a.signIn("ada", email: "ada@example.com")
        // Once A's heartbeat is back, A holds the session as its sign-in wrote it.
        let fromMemory = try await Self.eventually {
            _ = try await a.kernel.sessions.authenticate(bearer: ada.accessToken)
            let before = storeA.roundTrips.count
            _ = try await a.kernel.sessions.authenticate(bearer: ada.accessToken)
            return storeA.roundTrips.count == before
        }
        #expect(fromMemory, "A never answered from memory")
        // A rotates from memory: the refresh rate limit and the rotation, nothing else. (Asked again
        // while A's cache is dropped: on a loaded machine a heartbeat can come back late.)
        var token = ada.refreshToken
        var costs: [Int] = []
        let fromMemoryToo = try await Self.eventually {
            let before = storeA.roundTrips.count
            token = try await a.kernel.sessions.refresh(token).refreshToken
            costs.append(storeA.roundTrips.count - before)
            return costs.suffix(2) == [2, 2]
        }
        #expect(fromMemoryToo, "a refresh looked its session up in the database: \(costs)")
        // Past the entry's maximum age (nothing touched it for 1.1 s) a read would go to the
        // database; a rotation's lookup does not.
        costs = []
        let agedToo = try await Self.eventually {
            try await Task.sleep(for: .milliseconds(1100))
            let before = storeA.roundTrips.count
            token = try await a.kernel.sessions.refresh(token).refreshToken
            costs.append(storeA.roundTrips.count - before)
            return costs.last == 2
        }
        #expect(agedToo, "a refresh after the maximum age looked its session up in the database: \(costs)")
        // B rotates that token behind A's back (a rotation sends no notification): A still holds
        // `token` as the current one.
        let rotatedOnB = try await b.kernel.sessions.refresh(token).refreshToken
        // Past the reuse grace, `token` again at A: A's copy says it is current, the rotation's
        // version check says the row moved, and under row locks it is what it is, reuse.
        a.clock.advance(by: 11)
        b.clock.advance(by: 11)
        await #expect(throws: AuthError.refreshTokenReused) { _ = try await a.kernel.sessions.refresh(token) }
        // The session is gone for both instances, so is B's newer token.
        await #expect(throws: AuthError.self) { _ = try await b.kernel.sessions.refresh(rotatedOnB) }
        await a.server.close()
        await b.server.close()
    }

    @Test("A job its instance runs at once is stored claimed (no claim write); if that instance stops, another runs it after the lease")
    func aJobRunAtOnceIsStoredClaimed() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let (a, storeA) = try await instanceAndStore(settings), (b, _) = try await instanceAndStore(settings)
        let ran = Mutex<[String]>([])
        for h in [a, b] { h.kernel.jobs.register(kind: "t") { job in if case .string(let n)? = job.payload["n"] { ran.withLock { $0.append(n) } } } }
        func cost(_ work: () async throws -> Void) async throws -> Int {
            let before = storeA.roundTrips.count
            try await work()
            return storeA.roundTrips.count - before
        }
        // Queued, then claimed by a write of its own, run, deleted: three round trips.
        let queued = try await cost {
            let job = try await a.kernel.jobs.enqueue(kind: "t", payload: ["n": .string("1")])
            #expect(await a.kernel.jobs.run(job))
        }
        #expect(queued == 3)
        // Stored claimed, run, deleted: two.
        let claimed = try await cost {
            let job = try await a.kernel.jobs.enqueueClaimed(kind: "t", payload: ["n": .string("2")])
            #expect(await a.kernel.jobs.run(job, claimed: true))
        }
        #expect(claimed == 2)
        // A stored it claimed and stopped before running it: B leaves it alone for the lease, then runs it once.
        _ = try await a.kernel.jobs.enqueueClaimed(kind: "t", payload: ["n": .string("3")])
        #expect(await b.kernel.jobs.runDue() == 0)
        b.clock.advance(by: 299)
        #expect(await b.kernel.jobs.runDue() == 0)
        b.clock.advance(by: 2)
        #expect(await b.kernel.jobs.runDue() == 1)
        #expect(await b.kernel.jobs.runDue() == 0)
        #expect(ran.withLock { $0 } == ["1", "2", "3"])
        await a.server.close()
        await b.server.close()
    }

    @Test("A stale cached row is caught by its version: the write runs again under row locks and loses nothing")
    func aStaleRowIsCaughtByItsVersion() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let (a, storeA) = try await instanceAndStore(settings), (b, _) = try await instanceAndStore(settings)
        let policy = CodePolicy(ttl: 600, resendInterval: 0, maxAttempts: 10, maxFailures: 10, failureWindow: 600)
        // A holds the code as it issued it; B counts a wrong try behind A's back (no notification for codes).
        let code = try await a.kernel.codes.issue(purpose: "t", key: "k", policy: policy)
        let wrong = code == "000000" ? "111111" : "000000"
        await #expect(throws: AuthError.self) { try await b.kernel.codes.verify(purpose: "t", key: "k", code: wrong, policy: policy) }
        // A's next wrong try starts from its stale copy; the version check sends it to the locked path.
        let before = storeA.roundTrips.count
        do {
            try await a.kernel.codes.verify(purpose: "t", key: "k", code: wrong, policy: policy)
        } catch let error as AuthError {
            #expect(error.details?["attempts_remaining"] == .number(8), "a try was lost: \(error)")
        }
        #expect(storeA.roundTrips.count - before == 5, "the stale call, then BEGIN, the locked load, the call, COMMIT")
        await a.server.close()
        await b.server.close()
    }

    @Test("An import's COPY keeps every character of a record: backslashes, tabs, line breaks, quotes, any script")
    func copyKeepsEveryCharacter() async throws {
        let store = try await PostgresStore.open(try await StoreBackend.freshDatabase(), logger: logger)
        var user = UserRecord(email: "tricky@example.com", displayName: "A\\B\tC\nD\r\"E\" Ünï 漢字 🙂 \\N", createdAt: Date(timeIntervalSince1970: 1_800_000_000.123456))
        user.identities = [Identity(provider: "test", subject: "tab\there\\")]
        let session = SessionRecord(
            userID: user.id, deviceName: "line\nbreak", platform: nil, amr: ["test"], createdAt: Date(timeIntervalSince1970: 1_800_000_000.5),
            expiresAt: Date(timeIntervalSince1970: 1_900_000_000), refreshHash: "h")
        let copies = store.roundTrips.copies
        try await store.load([.putUser(user), .putSession(session)]) { _ in }
        #expect(store.roundTrips.copies - copies == 4, "users, identities, sessions and tokens, each copied")
        let back = try await store.read([.user(user.id), .session(session.id), .userByIdentity(Identity(provider: "test", subject: "tab\there\\"))]) { $0 }
        #expect(back.user(id: user.id) == user)
        #expect(back.session(id: session.id) == session)
        #expect(back.user(identity: Identity(provider: "test", subject: "tab\there\\"))?.id == user.id)
        await store.close()
    }

    @Test("A request that waits for a connection past acquire_timeout answers 503 store with Retry-After, and the pool serves again after", .timeLimit(.minutes(5)))
    func waitsForAConnectionAreBounded() async throws {
        var settings = try await StoreBackend.freshDatabase()
        settings.poolSize = 1
        settings.acquireTimeout = 0.3
        let logs = LogCapture()
        let (h, store) = try await instanceAndStore(settings, logs: logs)
        // Something holds the only connection for a long while.
        let held = Atomic<Bool>(false)
        let holder = Task {
            try await store.client.withConnection { _ in
                held.store(true, ordering: .sequentiallyConsistent)
                try await Task.sleep(for: .seconds(600))
            }
        }
        #expect(try await Self.eventually { held.load(ordering: .sequentiallyConsistent) })
        try await h.test { client in
            let oauth = try await client.send(.post, "/oauth/device_authorization", json: ["client_id": "tv"])
            #expect(oauth.status == .serviceUnavailable && oauth.json["error"] as? String == "temporarily_unavailable")
            #expect(oauth.headers[.retryAfter] == "1")
            let answer = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": "an-unknown-refresh-token"])
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.headers[.retryAfter] == "1")
            let error = try #require(answer.json["error"] as? [String: Any])
            #expect(error["code"] as? String == "UNAVAILABLE")
            #expect((error["details"] as? [String: Any])?["reason"] as? String == "store")
            #expect(logs.contains("no database connection within the acquire timeout"))
            // Once the connection is free, the same request is answered.
            holder.cancel()
            _ = await holder.result
            // (Asked until it answers: on a loaded machine a lease may still take longer than this test's 0.3 s.)
            #expect(try await Self.eventually {
                try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": "an-unknown-refresh-token"]).status == .unauthorized
            })
        }
        await h.server.close()
    }
}
