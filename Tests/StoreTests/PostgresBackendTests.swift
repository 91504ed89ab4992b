import AuthdCore
import AuthdServer
import AuthStorage
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import PostgresStore
import Synchronization
import Testing

/// What only the PostgreSQL backend has: schema checks, counters and keys shared by instances,
/// sealed keys, events between instances. Runs when AUTHD_TEST_POSTGRES_URL names a server.
@Suite("PostgreSQL backend", .enabled(if: StoreBackend.serverURL != nil))
struct PostgresBackendTests {
    let logger = Logger(label: "pg-test")
    let kek = SecureRandom.bytes(32)

    /// An instance's options on `settings`' database, as `authd serve` sets them up.
    /// One issuer for every instance (and for the data folders exported to them), as the configuration requires.
    static let config = #"{"issuer":"https://auth.example.test","mail":{"transport":"outbox"}}"#

    func instance(_ settings: AuthConfig.PostgresSettings, clock: ManualClock = ManualClock(), kek: [UInt8]? = nil) async throws -> TestHarness {
        let store = try await PostgresStore.open(settings, logger: logger)
        let keys = try await PostgresServerKeys.open(store: store, kek: kek ?? self.kek, logger: logger)
        // Instances sharing one database name one issuer, as the configuration requires of them.
        return try await TestHarness.make(
            config: Self.config,
            clock: clock, store: store, rateLimitCounters: PostgresRateLimitCounters(store: store), keys: keys,
            cluster: PostgresClusterEvents(store: store), decoyRecords: PostgresDecoyRecords(store: store))
    }

    @Test("A server refuses an unmigrated database and one migrated by a newer authd")
    func schemaVersionIsChecked() async throws {
        let settings = try await StoreBackend.freshDatabase()
        // Unmigrated: drop the bookkeeping table.
        let admin = try PostgresStore.connect(settings, logger: logger)
        try await admin.client.query("DROP TABLE authd_schema", logger: logger)
        await #expect(throws: PostgresStoreError.self) { _ = try await PostgresStore.open(settings, logger: logger) }
        // Newer: a version this build does not know is recorded; `migrate` refuses it too.
        try await admin.client.query(
            "CREATE TABLE authd_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())", logger: logger)
        try await admin.client.query("INSERT INTO authd_schema (version, name) VALUES (1, 'initial schema'), (99, 'from the future')", logger: logger)
        do {
            _ = try await PostgresStore.open(settings, logger: logger)
            Issue.record("opened a database at a newer schema")
        } catch let error as PostgresStoreError {
            #expect(error.description.contains("newer"))
        }
        await #expect(throws: PostgresStoreError.self) { _ = try await admin.migrate() }
        await admin.close()
    }

    @Test("TLS: `verify-full` verifies the server against ca_file, and refuses a server it cannot verify",
          .enabled(if: ProcessInfo.processInfo.environment["AUTHD_TEST_POSTGRES_CA"] != nil))
    func tlsRequireVerifiesTheServer() async throws {
        var settings = try await StoreBackend.freshDatabase()
        settings.tls = "verify-full"
        settings.caFile = ProcessInfo.processInfo.environment["AUTHD_TEST_POSTGRES_CA"]
        let store = try await PostgresStore.open(settings, logger: logger)
        #expect(try await store.counts() == StoreCounts(users: 0, sessions: 0))
        var sslInUse = false
        for try await on in try await store.client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger).decode(Bool.self) {
            sslInUse = on
        }
        #expect(sslInUse)
        await store.close()
        settings.caFile = nil
        do {
            _ = try await PostgresStore.open(settings, logger: logger)
            Issue.record("connected to a server whose certificate no trusted CA signed")
        } catch let error as PostgresStoreError {
            #expect(error.description.hasPrefix("cannot use the database at 127.0.0.1:"))
            #expect(!error.description.contains("postgres://"))
        }
        // `require` encrypts without verifying (as libpq's sslmode=require).
        settings.tls = "require"
        let unverified = try await PostgresStore.open(settings, logger: logger)
        await unverified.close()
    }

    @Test("A failed database request answers 503 and is logged without the values it carried")
    func databaseErrorsAre503() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let logs = LogCapture()
        let store = try await PostgresStore.open(settings, logger: logs.logger())
        let h = try await TestHarness.make(store: store, rateLimitCounters: PostgresRateLimitCounters(store: store))
        let user = try await h.kernel.users.signIn(.init(identity: Identity(provider: "test", subject: "e"), email: nil, emailVerified: false), linkingTo: nil)
        // Tables gone behind the server's back: every request on them fails in the database.
        try await store.client.query("DROP TABLE verification_codes, rate_limits", logger: logger)
        let policy = CodePolicy(ttl: 60, resendInterval: 0, maxAttempts: 3, maxFailures: 5, failureWindow: 60)
        let issued = await #expect(throws: StoreError.self) {
            _ = try await h.kernel.codes.issue(purpose: "t", key: "k", policy: policy, payload: ["marker": .string("sekrit-payload-marker")])
        }
        let read = await #expect(throws: StoreError.self) { _ = try await h.kernel.codes.pendingPayload(purpose: "t", key: "k") }
        for error in [issued, read] {
            guard case .unavailable = error else { Issue.record("expected StoreError.unavailable, got \(String(describing: error))"); continue }
        }
        await #expect(throws: AuthError.unavailable) { try await h.kernel.rateLimiter.consume(RateLimitRule(limit: 1, window: 60), key: "ip:1") }
        // Other tables still answer.
        #expect(try await h.kernel.users.user(id: user.id)?.id == user.id)
        #expect(logs.contains("database request failed"))
        #expect(!logs.contains("sekrit-payload-marker"))
        await h.server.close()
    }

    @Test("Migrating twice, or from two hosts at once, applies each migration once")
    func migrateIsIdempotent() async throws {
        let settings = try await StoreBackend.freshDatabase()  // already migrated once
        let a = try PostgresStore.connect(settings, logger: logger), b = try PostgresStore.connect(settings, logger: logger)
        async let first = a.migrate()
        async let second = b.migrate()
        let (x, y) = try await (first, second)
        #expect(x.isEmpty && y.isEmpty)
        await a.close()
        await b.close()
    }

    @Test("A rate limit holds across instances, exactly, under concurrency")
    func sharedRateLimits() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let clock = ManualClock()
        let one = try await PostgresStore.open(settings, logger: logger), two = try await PostgresStore.open(settings, logger: logger)
        let limiters = [
            RateLimiter(clock: clock, counters: PostgresRateLimitCounters(store: one)),
            RateLimiter(clock: clock, counters: PostgresRateLimitCounters(store: two)),
        ]
        let rule = RateLimitRule(limit: 10, window: 60)
        let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<60 { group.addTask { try await limiters[i % 2].attempt(rule, key: "k") == nil } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 10)
        // The refusal says how long: one interval (6 s) until the next event fits.
        #expect(try await limiters[1].attempt(rule, key: "k") == 6)
        clock.advance(by: 6)
        #expect(try await limiters[0].attempt(rule, key: "k") == nil)
        #expect(try await limiters[1].attempt(rule, key: "k") != nil)
        #expect(try await limiters[0].attempt(rule, key: "other") == nil)
        await limiters[0].reset(key: "k")
        #expect(try await limiters[1].attempt(rule, key: "k") == nil)
        await one.close()
        await two.close()
    }

    @Test("Second-factor answers take their budget's slots exactly across instances, under concurrency")
    func secondFactorBudgetAcrossInstances() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let clock = ManualClock()
        let a = try await instance(settings, clock: clock), b = try await instance(settings, clock: clock)
        let signedIn = try await a.signIn(email: "ada@example.com")
        let userID = try #require(UUID(uuidString: signedIn.user.id))
        let user = try #require(try await a.kernel.users.user(id: userID))
        var challenges: [SignInChallenge] = []
        for _ in 0..<12 {
            let started = try await a.kernel.sessions.startChallenge(user, amr: ["test"], device: .none, factors: ["totp"], requireUnchangedCredentials: false)
            challenges.append(try await a.kernel.sessions.pendingChallenge(started.challenge).0)
        }
        let kernels = [a.kernel, b.kernel]
        let checked = try await withThrowingTaskGroup(of: Bool.self) { group in
            for (i, challenge) in challenges.enumerated() {
                for j in 0..<5 {
                    group.addTask {
                        do {
                            _ = try await kernels[(i + j) % 2].sessions.reserveAnswer(challenge, network: "198.51.100.0/24")
                            return true
                        } catch let error as AuthError where error.code == "RATE_LIMIT_EXCEEDED" {
                            return false
                        }
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(checked == 10)
        await a.server.close()
        await b.server.close()
    }

    @Test("A device approved on one instance gets no session once the user's sessions were ended on the other")
    func recoveryReachesAnApprovedDeviceAcrossInstances() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let clock = ManualClock()
        let a = try await instance(settings, clock: clock), b = try await instance(settings, clock: clock)
        let signedIn = try await a.signIn(email: "ada@example.com")
        try await a.test { one in
            try await b.test { two in
                let started = try await one.send(.post, "/oauth/device_authorization", json: ["client_id": "tv"])
                let deviceCode = try #require(started.json["device_code"] as? String), userCode = try #require(started.json["user_code"] as? String)
                #expect(try await one.send(.post, "/api/v1/auth/device/\(userCode)/approve", bearer: signedIn.accessToken).status == .noContent)
                try await b.kernel.sessions.revokeAll(of: try #require(UUID(uuidString: signedIn.user.id)))
                clock.advance(by: 6)
                let poll = try await two.send(
                    .post, "/oauth/token", json: ["grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": deviceCode, "client_id": "tv"])
                #expect(poll.status == .badRequest && poll.json["error"] as? String == "access_denied")
            }
        }
    }

    @Test("A decoy account counts the tries made on every instance, exactly")
    func sharedDecoys() async throws {
        struct Counter: Codable, Sendable { var failures = 0 }
        let settings = try await StoreBackend.freshDatabase()
        let one = try await PostgresStore.open(settings, logger: logger), two = try await PostgresStore.open(settings, logger: logger)
        let decoys = [
            DecoyAccounts<Counter>(shared: PostgresDecoyRecords(store: one), namespace: "password"),
            DecoyAccounts<Counter>(shared: PostgresDecoyRecords(store: two), namespace: "password"),
        ]
        let now = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<40 { group.addTask { _ = try await decoys[i % 2].withRecord("nobody@example.com", now: now, make: { Counter() }) { $0.failures += 1 } } }
            try await group.waitForAll()
        }
        #expect(try await decoys[0].withRecord("nobody@example.com", now: now, make: { Counter() }) { $0.failures } == 40)
        // Namespaces and keys are apart; old decoys are purged.
        #expect(try await DecoyAccounts<Counter>(shared: PostgresDecoyRecords(store: one), namespace: "pin")
            .withRecord("nobody@example.com", now: now, make: { Counter() }) { $0.failures } == 0)
        try await PostgresDecoyRecords(store: one).purge(untouchedSince: now.addingTimeInterval(1))
        #expect(try await decoys[1].withRecord("nobody@example.com", now: now, make: { Counter() }) { $0.failures } == 0)
        await one.close()
        await two.close()
    }

    @Test("Every instance signs with the same keys; the database holds them only sealed")
    func sealedSharedKeys() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let a = try await instance(settings), b = try await instance(settings)
        #expect(a.server.keyRing.active.kid == b.server.keyRing.active.kid)
        #expect(try a.kernel.keys.loadOrCreateSecret(named: "pin-pepper", logger: logger) == (try b.kernel.keys.loadOrCreateSecret(named: "pin-pepper", logger: logger)))
        #expect(try a.kernel.keys.loadOrCreateSecret(named: "pin-pepper", logger: logger) != (try a.kernel.keys.loadOrCreateSecret(named: "other", logger: logger)))
        // No seed, no secret in plain text anywhere in the key tables.
        let seed = Base64URL.encode(a.server.keyRing.active.keyPair.seed)
        let store = try #require(a.server.store as? PostgresStore)
        var dump = ""
        for try await text in try await store.client.query(
            "SELECT coalesce(string_agg(sealed_key, ' '), '') || (SELECT string_agg(sealed, ' ') FROM server_secrets) FROM signing_keys", logger: logger
        ).decode(String.self) { dump = text }
        #expect(!dump.isEmpty && !dump.contains(seed))
        // Another KEK opens nothing: the server refuses to start.
        await #expect(throws: PostgresStoreError.self) { _ = try await instance(settings, kek: SecureRandom.bytes(32)) }
        await a.server.close()
        await b.server.close()
    }

    @Test("Tokens issued by one instance work on the other, and a key rotation reaches every instance")
    func tokensAndRotationAcrossInstances() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let a = try await instance(settings), b = try await instance(settings)
        let listening = Task { try await b.server.run() }  // runs b's cluster listener (and its HTTP server on a free port)
        defer { listening.cancel() }
        let session = try await a.signIn("x")
        _ = try await b.kernel.sessions.authenticate(bearer: session.accessToken)
        let refreshed = try await b.kernel.sessions.refresh(session.refreshToken)
        _ = try await a.kernel.sessions.authenticate(bearer: refreshed.accessToken)
        // Rotate on a (as `authd keys rotate` does) and wait for b to hear of it.
        let output = await (try AdminOperations(server: a.server, dataFolder: a.folder)).run(.rotateKey)
        #expect(output.exitCode == 0)
        let newKid = a.server.keyRing.active.kid
        var seen = false
        for _ in 0..<2400 where !seen {  // up to two minutes: generous for a loaded machine
            seen = b.server.keyRing.active.kid == newKid
            if !seen { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(seen)
        let signedByNewKey = try await a.signIn("y")
        _ = try await b.kernel.sessions.authenticate(bearer: signedByNewKey.accessToken)
        await a.server.close()
    }

    @Test("An approval request made on one instance reaches a subscriber on another")
    func approvalsReachOtherInstances() async throws {
        let settings = try await StoreBackend.freshDatabase()
        let a = try await instance(settings), b = try await instance(settings)
        let listening = Task { try await b.server.run() }
        defer { listening.cancel() }
        let user = try await a.kernel.users.signIn(.init(identity: Identity(provider: "test", subject: "s"), email: nil, emailVerified: false), linkingTo: nil)
        let stream = try b.kernel.approvals.subscribe(userID: user.id)
        let received = Task { () -> String? in
            for await approval in stream { return approval.id }
            return nil
        }
        // The listener may not be connected yet: keep asking until one arrives (bounded, generously).
        var created: [String] = []
        for _ in 0..<600 {
            created.append(try await a.kernel.approvals.create(kind: "t", userID: user.id, ttl: 60, deviceName: nil, payload: [:]).approval.id)
            try await Task.sleep(for: .milliseconds(100))
            if b.kernel.approvals.subscriberCount > 0, await Self.done(received) { break }
        }
        let id = try #require(await received.value)
        #expect(created.contains(id))
        await a.server.close()
    }

    @Test("An import into PostgreSQL copies the records in one transaction and reports them as it goes")
    func importReportsProgress() async throws {
        let a = try await TestHarness.make(config: Self.config, configure: { $0.addFullServerParts() })
        let users = a.folder + "/users.jsonl"
        try (0..<2_500).map { #"{"email":"bulk\#($0)@example.com"}"# }.joined(separator: "\n").write(toFile: users, atomically: true, encoding: .utf8)
        let operations = try AdminOperations(server: a.server, dataFolder: a.folder)
        #expect(await operations.run(.importUsers(from: users, dryRun: false)).exitCode == 0)
        #expect(await operations.run(.export(to: a.folder + "/bulk.json")).exitCode == 0)
        await a.server.close()

        let importer = try await instance(try await StoreBackend.freshDatabase())
        let store = try #require(importer.server.store as? PostgresStore)
        let (trips, copies, transactions) = (store.roundTrips.count, store.roundTrips.copies, store.roundTrips.transactions)
        let reports = Mutex<[AdminProgress]>([])
        let output = await (try AdminOperations(server: importer.server, dataFolder: importer.folder))
            .run(.importBundle(from: a.folder + "/bulk.json")) { report in reports.withLock { $0.append(report) } }
        #expect(output.exitCode == 0, "\(output.text)")
        let stored = reports.withLock { $0 }.filter { $0.phase == "storing" }
        #expect(stored.map(\.done) == [0, 1_000, 2_000, 2_500])
        #expect(stored.allSatisfy { $0.total == 2_500 } && stored.last?.fraction == 1)
        // By COPY, a thousand records at a time, in one transaction; not one statement per record.
        let copied = store.roundTrips.copies - copies
        #expect(copied >= 3)
        #expect(store.roundTrips.transactions - transactions == 1)
        #expect(store.roundTrips.count - trips <= copied + 4, "beside the copies: BEGIN, COMMIT, and counts before and after")
        #expect(try await importer.server.store.counts().users == 2_500)
        await importer.server.close()
    }

    @Test("An export moves everyone from a data folder into PostgreSQL and back, still signed in")
    func exportAndImportBothWays() async throws {
        // A data folder with a user who has a credential, a session and a pending code.
        let a = try await TestHarness.make(config: Self.config)
        let session = try await a.signIn("mover", email: "mover@example.com")
        let userID = try #require(UUID(uuidString: session.user.id))
        _ = try await a.kernel.users.update(userID) { $0.secrets["pin"] = .string("argon2-hash-stand-in") }
        let policy = CodePolicy(ttl: 3600, resendInterval: 0, maxAttempts: 3, maxFailures: 5, failureWindow: 60)
        let code = try await a.kernel.codes.issue(purpose: "t", key: "mover@example.com", policy: policy, payload: ["step": .string("move")])
        let pepper = try a.kernel.keys.loadOrCreateSecret(named: "pin-pepper", logger: logger)
        let file = a.folder + "/export.json"
        let exported = await (try AdminOperations(server: a.server, dataFolder: a.folder)).run(.export(to: file))
        #expect(exported.exitCode == 0, "\(exported.text)")
        await a.server.close()

        // Into a fresh database; instances started afterwards read the imported keys and secrets.
        let settings = try await StoreBackend.freshDatabase()
        let importer = try await instance(settings)
        let imported = await (try AdminOperations(server: importer.server, dataFolder: importer.folder)).run(.importBundle(from: file))
        #expect(imported.exitCode == 0, "\(imported.text)")
        #expect(imported.text.contains("1 users, 1 sessions"))
        // A second import is refused: the store is no longer empty.
        #expect(await (try AdminOperations(server: importer.server, dataFolder: importer.folder)).run(.importBundle(from: file)).exitCode == 1)
        await importer.server.close()
        let b = try await instance(settings)
        try await Self.expectMoved(b, session: session, userID: userID, pepper: pepper, code: code, policy: policy, logger: logger)
        let back = b.folder + "/back.json"
        #expect(await (try AdminOperations(server: b.server, dataFolder: b.folder)).run(.export(to: back)).exitCode == 0)
        await b.server.close()

        // And back into a new data folder.
        let folder = temporaryFolder()
        let c = try await TestHarness.make(config: Self.config, folder: folder)
        #expect(await (try AdminOperations(server: c.server, dataFolder: folder)).run(.importBundle(from: back)).exitCode == 0)
        await c.server.close()
        let d = try await TestHarness.make(config: Self.config, folder: folder)
        try await Self.expectMoved(d, session: session, userID: userID, pepper: pepper, code: code, policy: policy, logger: logger, useCode: true)
        await d.server.close()
    }

    static func expectMoved(
        _ h: TestHarness, session: SessionResponse, userID: UUID, pepper: [UInt8], code: String, policy: CodePolicy, logger: Logger,
        useCode: Bool = false
    ) async throws {
        #expect(try h.kernel.keys.loadOrCreateSecret(named: "pin-pepper", logger: logger) == pepper)
        let user = try #require(try await h.kernel.users.user(identity: Identity(provider: "test", subject: "mover")))
        #expect(user.id == userID && user.email == "mover@example.com" && user.secrets["pin"] == .string("argon2-hash-stand-in"))
        // The access token still verifies (same keys) and the session goes on.
        _ = try await h.kernel.sessions.authenticate(bearer: session.accessToken)
        #expect(try await h.kernel.sessions.sessions(of: userID).count == 1)
        // The code made before the move is there, and works (same code secret) where it is used last.
        #expect(try await h.kernel.codes.pendingPayload(purpose: "t", key: "mover@example.com") == ["step": .string("move")])
        if useCode { try await h.kernel.codes.verify(purpose: "t", key: "mover@example.com", code: code, policy: policy) }
    }

    static func done(_ task: Task<String?, Never>) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = await task.value; return true }
            group.addTask { try? await Task.sleep(for: .milliseconds(1)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
