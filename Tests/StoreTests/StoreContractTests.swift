import AuthdCore
import AuthdServer
import Logging
import PostgresStore
import AuthStorage
import AuthKernel
import AuthKernelTesting
import Foundation
import Synchronization
import Testing

/// The store's contract, run on every backend: what the services rely on, including the rules that
/// must stay exact under concurrency (one user per identity, single-use codes, refresh rotation and
/// reuse detection, uniqueness, cascades, jobs run once).
@Suite("Store contract")
struct StoreContractTests {
    func harness(_ backend: StoreBackend, clock: ManualClock = ManualClock()) async throws -> TestHarness {
        try await TestHarness.make(clock: clock, store: try await backend.makeStore())
    }

    func claim(_ subject: String, email: String? = nil, verified: Bool = true) -> UserService.Claim {
        .init(identity: Identity(provider: "test", subject: subject), email: email, emailVerified: email != nil && verified)
    }

    @Test("Users are found by id, email, identity and user name (any case)", arguments: StoreBackend.all)
    func usersByEveryKey(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let user = try await h.kernel.users.signIn(claim("ada", email: "ada@example.com"), linkingTo: nil)
        _ = try await h.kernel.users.update(user.id) { $0.username = "Ada_L" }
        #expect(try await h.kernel.users.user(id: user.id)?.email == "ada@example.com")
        #expect(try await h.kernel.users.user(email: "ada@example.com")?.id == user.id)
        #expect(try await h.kernel.users.user(identity: Identity(provider: "test", subject: "ada"))?.id == user.id)
        #expect(try await h.kernel.users.user(username: "ada_l")?.id == user.id)
        #expect(try await h.kernel.users.user(email: "nobody@example.com") == nil)
        #expect(try await h.server.store.counts() == StoreCounts(users: 1, sessions: 0))
    }

    @Test("Email, user name and identity stay unique, with the contract's 409s", arguments: StoreBackend.all)
    func uniqueness(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let a = try await h.kernel.users.signIn(claim("a", email: "a@example.com"), linkingTo: nil)
        let b = try await h.kernel.users.signIn(claim("b", email: "b@example.com"), linkingTo: nil)
        _ = try await h.kernel.users.update(a.id) { $0.username = "taken" }
        await #expect(throws: AuthError.usernameTaken) { _ = try await h.kernel.users.update(b.id) { $0.username = "TAKEN" } }
        await #expect(throws: AuthError.identityInUse) { _ = try await h.kernel.users.update(b.id) { $0.email = "a@example.com" } }
        await #expect(throws: AuthError.identityInUse) {
            _ = try await h.kernel.users.update(b.id) { $0.identities.append(Identity(provider: "test", subject: "a")) }
        }
        await #expect(throws: AuthError.identityInUse) { _ = try await h.kernel.users.signIn(claim("a"), linkingToUser: b.id) }
        // Nothing of the refused changes stuck.
        let stored = try #require(try await h.kernel.users.user(id: b.id))
        #expect(stored.username == nil && stored.email == "b@example.com" && stored.identities.count == 1)
    }

    /// Review finding 6: sessions past their expiry were dropped only when their refresh token came
    /// back, and anonymous users with no session never: both stayed in memory and in every snapshot.
    @Test("Expired sessions and idle anonymous users are purged, and the store shrinks", arguments: StoreBackend.all)
    func reviewFindingNothingExpiredStaysForever(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let h = try await harness(backend, clock: clock)
        defer { Task { await h.server.close() } }
        let day = 86_400.0
        let kept = try await h.kernel.users.signIn(claim("kept", email: "kept@example.com"), linkingTo: nil)
        _ = try await h.kernel.sessions.startSession(kept, amr: ["test"], device: .none)
        let anonymous = try await h.kernel.users.createAnonymous()
        _ = try await h.kernel.sessions.startSession(anonymous, amr: ["anonymous"], device: .none)
        let withPIN = try await h.kernel.users.update(try await h.kernel.users.createAnonymous().id) {
            $0.identities.append(Identity(provider: "pin", subject: $0.id.lowercased))
        }
        _ = try await h.kernel.sessions.startSession(withPIN, amr: ["pin"], device: .none)
        let live = try await h.kernel.users.createAnonymous()
        #expect(try await h.server.store.counts() == StoreCounts(users: 4, sessions: 3))

        // Past the refresh lifetime every session has expired; a new one is live.
        clock.advance(by: 31 * day)
        _ = try await h.kernel.sessions.startSession(live, amr: ["anonymous"], device: .none)
        #expect(try await h.kernel.sessions.purgeExpired() == 2)  // the anonymous user's waits for its user
        #expect(try await h.server.store.counts() == StoreCounts(users: 4, sessions: 2))
        #expect(try await h.kernel.users.purgeAnonymous(idleFor: Int(30 * day)) == 0)  // its session ended a day ago

        clock.advance(by: 30 * day)
        #expect(try await h.kernel.users.purgeAnonymous(idleFor: Int(30 * day)) == 1)
        #expect(try await h.kernel.users.user(id: anonymous.id) == nil)
        // The user with a PIN can come back; the one with a live session is in use; the email user stays.
        for user in [kept, withPIN, live] { #expect(try await h.kernel.users.user(id: user.id) != nil) }
        #expect(try await h.server.store.counts() == StoreCounts(users: 3, sessions: 1))
    }

    @Test("An API key is found by its hash, exchanged, and says why once it has ended", arguments: StoreBackend.all)
    func apiKeys(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let h = try await harness(backend, clock: clock)
        defer { Task { await h.server.close() } }
        let signedIn = try await h.signIn("k", email: "k@example.com")
        let principal = try await h.kernel.sessions.authenticate(bearer: signedIn.accessToken)
        let kept = try await h.kernel.sessions.createAPIKey(for: principal, name: "NAS", expiresIn: nil)
        let revoked = try await h.kernel.sessions.createAPIKey(for: principal, name: "old", expiresIn: nil)
        let expiring = try await h.kernel.sessions.createAPIKey(for: principal, name: "short", expiresIn: 60)
        #expect(Set(try await h.kernel.sessions.apiKeys(of: principal.user.id).map(\.deviceName)) == ["NAS", "old", "short"])
        let stored = try #require(try await h.kernel.sessions.apiKeys(of: principal.user.id).first { $0.id == kept.session.id })
        #expect(stored.kind == .apiKey && stored.keyPrefix == kept.session.keyPrefix && stored.expiresAt == SessionRecord.neverExpires)

        clock.advance(by: 61)
        let (token, _) = try await h.kernel.sessions.exchangeAPIKey(kept.secret)
        #expect(try await h.kernel.sessions.authenticate(bearer: token).session.id == kept.session.id)
        try await h.kernel.users.waitUntilDurable()
        #expect(try await h.kernel.sessions.apiKeys(of: principal.user.id).first { $0.id == kept.session.id }?.lastUsedAt == clock.now())
        try await h.kernel.sessions.revokeAPIKey(revoked.session.id, of: principal.user.id)
        try await h.kernel.sessions.purgeExpired()
        for (secret, reason) in [(revoked.secret, "revoked"), (expiring.secret, "expired"), ("authd_ak_nothing", "unknown")] {
            await #expect(throws: AuthError.invalidAPIKey(reason)) { _ = try await h.kernel.sessions.exchangeAPIKey(secret) }
        }
        await #expect(throws: AuthError.invalidRefreshToken) { _ = try await h.kernel.sessions.refresh(kept.secret) }
        #expect(try await h.kernel.sessions.apiKeys(of: principal.user.id).map(\.deviceName) == ["NAS"])
    }

    @Test("Service keys are listed by name, found by hash and revoked", arguments: StoreBackend.all)
    func serviceKeys(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let keys = ServiceKeys(store: h.server.store, clock: h.clock)
        let a = try await keys.create(name: "alpha"), b = try await keys.create(name: "beta")
        // A code of another purpose is no service key.
        _ = try await h.kernel.codes.issue(purpose: "other", key: "x", policy: CodePolicy(ttl: 60, resendInterval: 0, maxAttempts: 5, maxFailures: 5, failureWindow: 60))
        #expect(try await keys.list().map(\.name) == ["alpha", "beta"])
        let (foundA, foundB) = (try await keys.verify(a), try await keys.verify(b))
        #expect(foundA == "alpha" && foundB == "beta")
        try await keys.revoke(name: "alpha")
        #expect(try await keys.verify(a) == nil)
        #expect(try await keys.list().map(\.name) == ["beta"])
    }

    @Test("Users are paged in id order and searched by email or user name, and metadata is kept", arguments: StoreBackend.all)
    func usersPagedAndSearched(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        var ids: [String] = []
        for i in 0..<5 { ids.append(try await h.kernel.users.signIn(claim("s\(i)", email: "user\(i)@example.com"), linkingTo: nil).id.uuidString) }
        let named = try await h.kernel.users.signIn(claim("n"), linkingTo: nil)
        _ = try await h.kernel.users.update(named.id) { $0.username = "Percent_50%"; $0.appMetadata = ["couple_id": .string("c-1")]; $0.userMetadata = ["a": .number(1)]; $0.locale = "de-AT" }
        let stored = try #require(try await h.kernel.users.user(id: named.id))
        #expect(stored.appMetadata == ["couple_id": .string("c-1")] && stored.userMetadata == ["a": .number(1)] && stored.locale == "de-AT")
        let first = try await h.kernel.users.page(matching: "example.com", after: nil, limit: 2)
        let rest = try await h.kernel.users.page(matching: "example.com", after: first.last?.id, limit: 10)
        #expect((first + rest).map(\.id.uuidString) == ids.sorted())
        #expect(try await h.kernel.users.page(matching: "", after: nil, limit: 10).count == 6)
        // The query is literal: % and _ match themselves (no LIKE patterns).
        #expect(try await h.kernel.users.page(matching: "percent_50%", after: nil, limit: 10).map(\.id) == [named.id])
        #expect(try await h.kernel.users.page(matching: "p_rcent", after: nil, limit: 10).isEmpty)
        #expect(try await h.kernel.users.page(matching: "%50", after: nil, limit: 10).isEmpty)
        #expect(try await h.kernel.users.page(matching: "user3", after: nil, limit: 10).count == 1)
    }

    @Test("Concurrent first sign-ins of one identity make one user", arguments: StoreBackend.all)
    func concurrentFirstSignIns(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let ids = try await withThrowingTaskGroup(of: UUID.self) { group in
            for _ in 0..<20 { group.addTask { try await h.kernel.users.signIn(claim("new", email: "new@example.com"), linkingTo: nil).id } }
            return try await group.reduce(into: Set<UUID>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(try await h.server.store.counts().users == 1)
    }

    @Test("Refresh rotates, a reused token after the grace ends the session", arguments: StoreBackend.all)
    func refreshRotationAndReuse(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let h = try await harness(backend, clock: clock)
        defer { Task { await h.server.close() } }
        let first = try await h.signIn("r")
        let second = try await h.kernel.sessions.refresh(first.refreshToken)
        #expect(second.refreshToken != first.refreshToken)
        _ = try await h.kernel.sessions.authenticate(bearer: second.accessToken)
        clock.advance(by: 11)  // past the 10 s reuse grace
        await #expect(throws: AuthError.refreshTokenReused) { _ = try await h.kernel.sessions.refresh(first.refreshToken) }
        // The whole family is gone: the token that was current is refused too, and so is the access token.
        await #expect(throws: AuthError.invalidRefreshToken) { _ = try await h.kernel.sessions.refresh(second.refreshToken) }
        await #expect(throws: AuthError.unauthorized) { _ = try await h.kernel.sessions.authenticate(bearer: second.accessToken) }
        #expect(try await h.server.store.counts().sessions == 0)
    }

    @Test("Concurrent refreshes of one token inside the grace all succeed on one session", arguments: StoreBackend.all)
    func concurrentRefreshes(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let first = try await h.signIn("c")
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 { group.addTask { try await h.kernel.sessions.refresh(first.refreshToken).refreshToken } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(tokens).count == 10)
        #expect(try await h.server.store.counts().sessions == 1)
        // Every answer works: whichever one the device kept.
        for token in tokens { _ = try await h.kernel.sessions.refresh(token) }
    }

    @Test("A code is used once, however many requests race for it", arguments: StoreBackend.all)
    func codeSingleUse(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let policy = CodePolicy(ttl: 300, resendInterval: 0, maxAttempts: 5, maxFailures: 50, failureWindow: 3600)
        let code = try await h.kernel.codes.issue(purpose: "t", key: "k@example.com", policy: policy)
        let successes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { (try? await h.kernel.codes.verify(purpose: "t", key: "k@example.com", code: code, policy: policy)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(successes == 1)
    }

    @Test("A single-use token is redeemed once, however many requests race for it; a wrong secret spends it", arguments: StoreBackend.all)
    func tokenSingleUse(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let h = try await harness(backend, clock: clock)
        defer { Task { await h.server.close() } }
        let tokens = h.kernel.tokens
        let token = try await tokens.issue(purpose: "magic.link", subject: "ada@example.com", ttl: 900, payload: ["next": .string("/photos")])
        let (id, secret) = (token.split(separator: ".")[0], token.split(separator: ".")[1])
        #expect(id.count == 22 && secret.count == 43, "128 bits of id, 256 of secret")
        // Nothing of the token is in the store as it was sent.
        let codes = try await h.server.store.read([.allCodes]) { Array($0.codes.values) }.filter { $0.purpose == "token:magic.link" }
        #expect(codes.count == 1 && !codes[0].key.contains(id) && !codes[0].digest.contains(secret))
        #expect(try await tokens.peek(purpose: "magic.link", token: token)?.subject == "ada@example.com", "peeking spends nothing")
        #expect(try await tokens.peek(purpose: "other", token: token) == nil, "purposes never mix")
        let redeemed = await withTaskGroup(of: SingleUseTokens.Token?.self) { group in
            for _ in 0..<20 { group.addTask { try? await tokens.redeem(purpose: "magic.link", token: token) } }
            return await group.reduce(into: [SingleUseTokens.Token]()) { if let t = $1 { $0.append(t) } }
        }
        #expect(redeemed.count == 1 && redeemed.first?.payload == ["next": .string("/photos")] && redeemed.first?.subject == "ada@example.com")
        #expect(try await tokens.peek(purpose: "magic.link", token: token) == nil)

        let guessed = try await tokens.issue(purpose: "magic.link", subject: "bo@example.com", ttl: 900)
        let wrong = guessed.dropLast() + (guessed.last == "A" ? "B" : "A")
        #expect(try await tokens.redeem(purpose: "magic.link", token: String(wrong)) == nil)
        #expect(try await tokens.redeem(purpose: "magic.link", token: guessed) == nil, "the wrong secret spent it")

        let peeked = try await tokens.issue(purpose: "magic.link", subject: "bo@example.com", ttl: 900)
        #expect(try await tokens.peek(purpose: "magic.link", token: String(peeked.dropLast() + (peeked.last == "A" ? "B" : "A"))) == nil)
        #expect(try await tokens.peek(purpose: "magic.link", token: peeked) == nil, "a wrong secret spends it when peeked too")

        let late = try await tokens.issue(purpose: "magic.link", subject: "cy@example.com", ttl: 60)
        clock.advance(by: 61)
        #expect(try await tokens.redeem(purpose: "magic.link", token: late) == nil, "expired")
        for malformed in ["", ".", "a.b", String(repeating: "x", count: 200), token + "x"] {
            #expect(try await tokens.redeem(purpose: "magic.link", token: malformed) == nil)
        }
    }

    @Test("A subject's tokens for a purpose are revoked together, and at most twenty live at once", arguments: StoreBackend.all)
    func tokenRevocation(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let tokens = h.kernel.tokens
        var issued: [String] = []
        for _ in 0..<3 { issued.append(try await tokens.issue(purpose: "magic.link", subject: "ada@example.com", ttl: 900)) }
        let other = try await tokens.issue(purpose: "magic.link", subject: "bo@example.com", ttl: 900)
        let otherPurpose = try await tokens.issue(purpose: "not-you", subject: "ada@example.com", ttl: 900)
        #expect(try await tokens.revokeAll(purpose: "magic.link", subject: "ada@example.com") == 3)
        for token in issued { #expect(try await tokens.redeem(purpose: "magic.link", token: token) == nil) }
        #expect(try await tokens.peek(purpose: "magic.link", token: other) != nil, "another subject's stay")
        #expect(try await tokens.peek(purpose: "not-you", token: otherPurpose) != nil, "another purpose's stay")
        #expect(try await tokens.revokeAll(purpose: "magic.link", subject: "ada@example.com") == 0)

        var many: [String] = []
        for _ in 0..<(SingleUseTokens.maxPerSubject + 2) { many.append(try await tokens.issue(purpose: "magic.link", subject: "cy@example.com", ttl: 900)) }
        #expect(try await tokens.peek(purpose: "magic.link", token: many[0]) == nil, "the oldest went")
        #expect(try await tokens.peek(purpose: "magic.link", token: many[1]) == nil)
        #expect(try await tokens.peek(purpose: "magic.link", token: many[2]) != nil)
        #expect(try await tokens.revokeAll(purpose: "magic.link", subject: "cy@example.com") == SingleUseTokens.maxPerSubject)
    }

    @Test("Wrong codes are counted, and the code dies after the attempt limit", arguments: StoreBackend.all)
    func codeAttempts(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let policy = CodePolicy(ttl: 300, resendInterval: 0, maxAttempts: 3, maxFailures: 50, failureWindow: 3600)
        let code = try await h.kernel.codes.issue(purpose: "t", key: "k", policy: policy)
        let wrong = code == "000000" ? "111111" : "000000"
        // Contract §5: each INVALID_CODE says how many tries are left, 0 once the code is dead.
        for left in [2, 1, 0] {
            await #expect(throws: AuthError.invalidCode(attemptsRemaining: left)) {
                try await h.kernel.codes.verify(purpose: "t", key: "k", code: wrong, policy: policy)
            }
        }
        await #expect(throws: AuthError.invalidCode(attemptsRemaining: 0)) { try await h.kernel.codes.verify(purpose: "t", key: "k", code: code, policy: policy) }
        await #expect(throws: AuthError.invalidCode(attemptsRemaining: 0)) { try await h.kernel.codes.verify(purpose: "t", key: "none", code: code, policy: policy) }
    }

    @Test("Deleting a user takes its sessions, identities, codes and approvals with it", arguments: StoreBackend.all)
    func deletionCascades(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let session = try await h.signIn("gone", email: "gone@example.com")
        let id = try #require(UUID(uuidString: session.user.id))
        let policy = CodePolicy(ttl: 300, resendInterval: 0, maxAttempts: 3, maxFailures: 50, failureWindow: 3600)
        _ = try await h.kernel.codes.issue(purpose: "t", key: "gone@example.com", policy: policy, payload: ["p": .bool(true)])
        #expect(try await h.kernel.codes.pendingPayload(purpose: "t", key: "gone@example.com") != nil)
        let (approval, _) = try await h.kernel.approvals.create(kind: "t", userID: id, ttl: 300, deviceName: nil, payload: [:])
        try await h.kernel.users.delete(id)
        #expect(try await h.kernel.users.user(id: id) == nil)
        #expect(try await h.kernel.users.user(identity: Identity(provider: "test", subject: "gone")) == nil)
        #expect(try await h.kernel.codes.pendingPayload(purpose: "t", key: "gone@example.com") == nil)
        #expect(try await h.kernel.approvals.approval(id: approval.id) == nil)
        await #expect(throws: AuthError.invalidRefreshToken) { _ = try await h.kernel.sessions.refresh(session.refreshToken) }
        #expect(try await h.server.store.counts() == StoreCounts(users: 0, sessions: 0))
        // The identity is free again.
        _ = try await h.kernel.users.signIn(claim("gone", email: "gone@example.com"), linkingTo: nil)
    }

    @Test("What a write body changed before it threw is kept", arguments: StoreBackend.all)
    func changesBeforeAThrowAreKept(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let user = try await h.kernel.users.signIn(claim("k"), linkingTo: nil)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await h.server.store.write([.user(user.id)]) { state in
                var changed = state.user(id: user.id)!
                changed.displayName = "counted"
                state.put(changed)
                throw Refused()
            }
        }
        #expect(try await h.kernel.users.user(id: user.id)?.displayName == "counted")
    }

    @Test("Approvals: pending, approved with the match code, completed once, purged", arguments: StoreBackend.all)
    func approvals(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let h = try await harness(backend, clock: clock)
        defer { Task { await h.server.close() } }
        let user = try await h.kernel.users.signIn(claim("ap"), linkingTo: nil)
        let (approval, match) = try await h.kernel.approvals.create(
            kind: "t", userID: user.id, ttl: 60, deviceName: "tv", payload: [:], platform: "tvos", network: "203.0.113.0/24")
        #expect(try await h.kernel.approvals.pending(userID: user.id).map(\.id) == [approval.id])
        clock.advance(by: -30)
        _ = try await h.kernel.sessions.startSession(user, amr: ["t", "mfa"], device: .none)
        clock.advance(by: 30)
        let approver = try #require(try await h.kernel.sessions.sessions(of: user.id).first)
        try await h.kernel.approvals.approve(id: approval.id, userID: user.id, matchCode: match, by: approver)
        #expect(try await h.kernel.approvals.pending(userID: user.id).isEmpty)
        // What the requester's completion reads back, as the store keeps it.
        let stored = try #require(try await h.kernel.approvals.approval(id: approval.id))
        #expect(stored.platform == "tvos" && stored.network == "203.0.113.0/24")
        #expect(stored.approvedBy == .init(sessionID: approver.id, authTime: approver.createdAt, amr: ["t", "mfa"], credentialVersion: 0))
        _ = try await h.kernel.approvals.complete(id: approval.id, kind: "t")
        await #expect(throws: AuthError.self) { _ = try await h.kernel.approvals.complete(id: approval.id, kind: "t") }
        clock.advance(by: 60 * 3 + 86_400)
        #expect(try await h.kernel.approvals.purgeExpired() == 1)
        #expect(try await h.kernel.approvals.approval(id: approval.id) == nil)
    }

    @Test("Expired codes are purged, live ones kept", arguments: StoreBackend.all)
    func codePurge(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let h = try await harness(backend, clock: clock)
        defer { Task { await h.server.close() } }
        let short = CodePolicy(ttl: 10, resendInterval: 0, maxAttempts: 3, maxFailures: 5, failureWindow: 10)
        let long = CodePolicy(ttl: 3600, resendInterval: 0, maxAttempts: 3, maxFailures: 5, failureWindow: 10)
        _ = try await h.kernel.codes.issue(purpose: "t", key: "short", policy: short, payload: ["p": .bool(true)])
        _ = try await h.kernel.codes.issue(purpose: "t", key: "long", policy: long, payload: ["p": .bool(true)])
        clock.advance(by: 60)
        #expect(try await h.kernel.codes.purgeExpired(retention: 0) == 1)
        #expect(try await h.kernel.codes.pendingPayload(purpose: "t", key: "long") != nil)
    }

    @Test("A due job runs once, also when two queues (two instances) race for it", arguments: StoreBackend.all)
    func jobsRunOnce(_ backend: StoreBackend) async throws {
        let h = try await harness(backend)
        defer { Task { await h.server.close() } }
        let runs = Mutex(0)
        // A second instance's queue on the same store; the file store is never shared, so it races with itself.
        let other = h.server.store.isShared ? JobQueue(store: h.server.store, clock: h.clock, logger: h.kernel.logger) : h.kernel.jobs
        for queue in [h.kernel.jobs, other] {
            queue.register(kind: "count") { _ in
                runs.withLock { $0 += 1 }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await h.kernel.jobs.enqueue(kind: "count", payload: [:])
        async let a = h.kernel.jobs.runDue()
        async let b = other.runDue()
        #expect(await a + b == 1)
        #expect(runs.withLock { $0 } == 1)
        #expect(try await h.kernel.jobs.pending().isEmpty)
    }

    @Test("Two rules are consumed together or not at all, exactly under concurrency", arguments: StoreBackend.all)
    func chargesAllOrNothing(_ backend: StoreBackend) async throws {
        let clock = ManualClock()
        let counters: any RateLimitCounters
        var shared: PostgresStore?
        switch backend {
        case .file: counters = MemoryRateLimitCounters()
        case .postgres:
            let store = try await PostgresStore.open(try await StoreBackend.freshDatabase(), logger: Logger(label: "store-test"))
            shared = store
            counters = PostgresRateLimitCounters(store: store)
        }
        defer { if let shared { Task { await shared.close() } } }
        let limiter = RateLimiter(clock: clock, counters: counters)
        let network = RateLimitRule(limit: 10, window: 60), address = RateLimitRule(limit: 1, window: 60)
        func both(_ who: String) -> [RateLimitCharge] {
            [RateLimitCharge(network, key: "net"), RateLimitCharge(address, key: "addr:\(who)")]
        }
        #expect(try await limiter.attempt(both("a")) == nil)
        // The narrow rule refuses twice (the wait is the longest refusal's); the network spends nothing.
        #expect(try await limiter.attempt(both("a")) == 60)
        #expect(try await limiter.attempt(both("a")) == 60)
        await #expect(throws: AuthError.rateLimited(retryAfter: 60)) { try await limiter.consume(both("a")) }
        var left = 0
        while try await limiter.attempt(network, key: "net") == nil { left += 1 }
        #expect(left == 9)
        // Now the wide rule refuses, and the narrow one for a new address is not spent either.
        #expect(try await limiter.attempt(both("b")) == 6)
        clock.advance(by: 6)
        #expect(try await limiter.attempt(both("b")) == nil)

        // Concurrent: 40 requests over 8 addresses against a network budget of 5 let exactly 5 through.
        await limiter.reset(key: "net")
        clock.advance(by: 120)
        let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<40 { group.addTask { try await limiter.attempt([RateLimitCharge(RateLimitRule(limit: 5, window: 60), key: "net2"), RateLimitCharge(address, key: "addr2:\(i % 8)")]) == nil } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 5)
    }
}
