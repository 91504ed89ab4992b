import AuthKernel
import AuthdCore
import AuthKernelTesting
import Foundation
import HTTPTypes
@testable import PasswordProvider
import Testing

struct RegistrationAndLoginTests {
    typealias T = PasswordTest

    @Test func registerNeedsTheInboxBeforeTheFirstSession() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let r = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "New@Example.com", "password": T.password, "display_name": "Nia"])
            #expect(r.status == .accepted)
            #expect(r.json["status"] as? String == "verification_required" && r.json["email"] as? String == "new@example.com")
            #expect(try await h.kernel.users.user(email: "new@example.com") == nil)  // nothing exists before the code

            let early = try await T.login(client, "new@example.com", T.password)
            #expect(early.status == .forbidden && early.errorCode == "EMAIL_NOT_VERIFIED")
            // The unverified login re-sends the code (after answering), subject to the resend interval.
            try await Task.sleep(for: .milliseconds(100))
            #expect(try h.mail().count == 1)
            h.clock.advance(by: 60)
            _ = try await T.login(client, "new@example.com", T.password)
            #expect(try await T.waitForMail(h, count: 2).count == 2)
            // A wrong password for a pending registration is just wrong.
            #expect(try await T.login(client, "new@example.com", "wrong horse battery").errorCode == "INVALID_CREDENTIALS")

            let code = try #require(try T.lastCode(h, to: "new@example.com"))
            #expect(try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": "new@example.com", "code": "000000" == code ? "111111" : "000000", "password": T.password]).errorCode == "INVALID_CODE")
            let verified = try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": "new@example.com", "code": code, "password": T.password, "device_name": "web"])
            #expect(verified.status == .ok)
            let user = try verified.decode(SessionResponse.self).user
            #expect(user.emailVerified && user.authProviders == ["password"] && user.displayName == "Nia")

            let login = try await T.login(client, "NEW@example.com", T.password)
            #expect(login.status == .ok)
            #expect(try login.decode(SessionResponse.self).user.id == user.id)
        }
    }

    @Test func theStoredHashIsAStandardArgon2idPHCString() async throws {
        let h = try await T.harness()
        let id = try await h.test { client async throws in try await T.registered(client, h, email: "phc@x.io").user.id }
        let restarted = try await TestHarness.make(providers: [PasswordProvider.self], config: T.config, folder: h.folder)
        let user = try #require(try await restarted.kernel.users.user(id: UUID(uuidString: id)!))
        await restarted.server.close()
        guard case .object(let credential) = user.secrets["password"], case .string(let hash) = credential["hash"] else {
            Issue.record("no stored hash")
            return
        }
        #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(Argon2id.verify(T.password, hash: hash))
        #expect(!String(describing: user.secrets).contains(T.password))
    }

    @Test(arguments: [
        ("short1", "too_short"), (String(repeating: "x", count: 129), "too_long"), ("weak@example.com", "matches_email"),
        ("weak", "too_short"), ("iloveyou", "too_common"), ("ｐａｓｓｗｏｒｄ", "too_common"), ("Password", "too_common"),
    ])
    func weakPasswordsSayWhichRuleFailed(password: String, reason: String) async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let r = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "weak@example.com", "password": password])
            #expect(r.status == .badRequest && r.errorCode == "WEAK_PASSWORD")
            #expect(((r.json["error"] as? [String: Any])?["details"] as? [String: Any])?["reason"] as? String == reason)
        }
    }

    @Test func lengthCountsCodePointsAfterNFKC() {
        let policy = PasswordPolicy(minLength: 8)
        // Eight code points once composed, though nine when typed with a combining accent.
        #expect(throws: Never.self) { try policy.check("cafe\u{301}-bar", email: nil) }
        #expect(throws: AuthError.self) { try policy.check("cafe\u{301}-ba", email: nil) }
        #expect(PasswordPolicy.normalize("ﬁnance") == "finance")
    }

    @Test func registrationErrors() async throws {
        let h = try await T.harness()
        _ = try await h.signIn("someone", email: "taken@x.io")
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "taken@x.io", "password": T.password]).errorCode == "ACCOUNT_EXISTS")
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "nope", "password": T.password]).errorCode == "INVALID_EMAIL")
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "a@x.io"]).errorCode == "INVALID_REQUEST")
            let longName = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "a@x.io", "password": T.password, "display_name": String(repeating: "n", count: 101)])
            #expect(longName.errorCode == "INVALID_REQUEST")
            // Registering again before verifying replaces the pending registration (resend interval applies).
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "a@x.io", "password": T.password]).status == .accepted)
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "a@x.io", "password": T.password]).status == .tooManyRequests)
        }
    }

    /// Contract §12: right after registering, a resend says when (429), instead of answering 200 and sending nothing.
    @Test func aResendRightAfterRegisteringSaysWhenInsteadOfPretending() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "p@x.io", "password": T.password]).status == .accepted)
            h.clock.advance(by: 10)
            let early = try await client.send(.post, "/api/v1/auth/password/resend-verification", json: ["email": "p@x.io"])
            #expect(early.status == .tooManyRequests && early.retryAfter == 50)
            h.clock.advance(by: 50)
            #expect(try await client.send(.post, "/api/v1/auth/password/resend-verification", json: ["email": "p@x.io"]).status == .ok)
            #expect(try await T.waitForMail(h, count: 2).count == 2)
        }
    }

    @Test func resendVerificationRevealsNothing() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "p@x.io", "password": T.password])
            h.clock.advance(by: 60)
            let known = try await client.send(.post, "/api/v1/auth/password/resend-verification", json: ["email": "p@x.io"])
            let unknown = try await client.send(.post, "/api/v1/auth/password/resend-verification", json: ["email": "q@x.io"])
            #expect(known.status == .ok && unknown.status == .ok)
            #expect(known.json as NSDictionary == unknown.json as NSDictionary)
            #expect(try await T.waitForMail(h, count: 2).map { $0.to } == ["p@x.io", "p@x.io"])
            let knownAgain = try await client.send(.post, "/api/v1/auth/password/resend-verification", json: ["email": "p@x.io"])
            let unknownAgain = try await client.send(.post, "/api/v1/auth/password/resend-verification", json: ["email": "q@x.io"])
            #expect(knownAgain.status == .tooManyRequests && unknownAgain.status == .tooManyRequests)
            #expect(knownAgain.retryAfter == unknownAgain.retryAfter)
        }
    }

    /// The same answer; one Argon2id verification with the current parameters for a known email and
    /// a pending registration, none for an unknown email (contract §17: no hashing thread spent on an
    /// address anyone can make up), whose time is the refusal floor waited out, at least what that
    /// verification costs here (RefusalFloorTests). Counted rather than timed, so a loaded machine
    /// cannot fail it. (bench/run's (e) times a password login.)
    @Test func unknownEmailAndWrongPasswordLookTheSameAndDoTheSameWork() async throws {
        let h = try await T.harness(#"{"mail":{"transport":"outbox"},"password":{"login_per_email":{"limit":100,"window":60},"lockout_after":100}}"#)
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "known@x.io")
            // A registration waiting for its code: its hash is checked instead of the dummy, still one.
            let pending = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "pending@x.io", "password": T.password])
            #expect(pending.status == .accepted)
            let provider = try #require(h.server.providers.lazy.compactMap { $0 as? PasswordProvider }.first), hasher = provider.hasher
            // What the server measures at start (one pass at a time) is done before anything is counted.
            try await provider.measureSchemeCosts()
            var answers: [String: Set<NSDictionary>] = [:], work: [String: [Int]] = [:]
            for _ in 0..<2 {
                for email in ["known@x.io", "unknown@x.io", "pending@x.io"] {
                    let before = hasher.verificationCount
                    let r = try await T.login(client, email, "wrong horse battery")
                    work[email, default: []].append(hasher.verificationCount - before)
                    #expect(r.status == .unauthorized)
                    answers[email, default: []].insert(r.json as NSDictionary)
                }
            }
            #expect(Set(answers.values).count == 1 && answers["known@x.io"]?.count == 1)
            #expect(work == ["known@x.io": [1, 1], "unknown@x.io": [0, 0], "pending@x.io": [1, 1]])
            let stored = try #require(try await h.kernel.users.user(email: "known@x.io")?.secret(PasswordProvider.id, as: PasswordCredential.self)).hash
            #expect(!hasher.needsRehash(stored) && !hasher.needsRehash(hasher.dummyHash))
        }
    }

    @Test func repeatedFailuresLockTheAccountForAWhile() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "lock@x.io")
            for _ in 0..<2 { #expect(try await T.login(client, "lock@x.io", "wrong horse battery").status == .unauthorized) }
            let locked = try await T.login(client, "lock@x.io", "wrong horse battery")
            #expect(locked.status == .tooManyRequests && locked.retryAfter == 60 && locked.headers[.retryAfter] == "60")
            #expect(try await T.login(client, "lock@x.io", T.password).status == .tooManyRequests)
            h.clock.advance(by: 60)
            #expect(try await T.login(client, "lock@x.io", T.password).status == .ok)
        }
        #expect(h.logs.contains("password sign-in locked"))
    }

    @Test func loginsAreLimitedPerEmailAndPerIP() async throws {
        let h = try await T.harness(#"{"password":{"login_per_email":{"limit":2,"window":60},"login_per_ip":{"limit":4,"window":60}}}"#)
        // Each refusal moves the injected clock on by the refusal floor: 250 ms, or more where this
        // machine's own hash, measured, takes longer (a loaded machine).
        let floor = try await RefusalFloorTests.floor(h)
        try await h.test { client async throws in
            for _ in 0..<2 { #expect(try await T.login(client, "a@x.io", "whatever pass").status == .unauthorized) }
            #expect(try await T.login(client, "a@x.io", "whatever pass").retryAfter == Int((30 - 2 * floor).rounded(.up)))
            // The refusal by the address's limit did not spend the network's: two more fit.
            #expect(try await T.login(client, "b@x.io", "whatever pass").status == .unauthorized)
            #expect(try await T.login(client, "c@x.io", "whatever pass").status == .unauthorized)
            // 15 s apart, less what the four refusals' floors moved the clock on.
            #expect(try await T.login(client, "d@x.io", "whatever pass").retryAfter == Int((15 - 4 * floor).rounded(.up)))
        }
    }

    @Test func loginRehashesWhenTheParametersWereRaised() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let s = try await T.registered(client, h, email: "old@x.io")
            let oldHash = try Argon2id(opsLimit: 1, memLimit: 8 << 20).hash(T.password)
            let id = UUID(uuidString: s.user.id)!
            _ = try await h.kernel.users.update(id) { user in
                user.secrets["password"] = .object(["hash": .string(oldHash), "failures": .number(0), "changed_at": .number(0)])
            }
            #expect(try await T.login(client, "old@x.io", T.password).status == .ok)
            guard case .object(let c) = try await h.kernel.users.user(id: id)?.secrets["password"], case .string(let hash) = c["hash"] else {
                Issue.record("no hash")
                return
            }
            #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
            #expect(try await T.login(client, "old@x.io", T.password).status == .ok)
        }
    }

    @Test func registeringWithABearerLinksToTheCaller() async throws {
        let h = try await T.harness()
        let anonymous = try await h.kernel.users.createAnonymous()
        let session = try await h.kernel.sessions.startSession(anonymous, amr: ["anonymous"], device: .none)
        let other = try await h.signIn("other", email: "other@x.io")
        try await h.test { client async throws in
            let r = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "mine@x.io", "password": T.password], bearer: session.accessToken)
            #expect(r.status == .accepted)
            let code = try #require(try T.lastCode(h, to: "mine@x.io"))
            let linked = try await client.send(
                .post, "/api/v1/auth/password/verify-email", json: ["email": "mine@x.io", "code": code, "password": T.password], bearer: session.accessToken)
            let user = try linked.decode(SessionResponse.self).user
            #expect(user.id == anonymous.id.lowercased && !user.isAnonymous && user.authProviders == ["password"])
            let clash = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "other@x.io", "password": T.password], bearer: session.accessToken)
            #expect(clash.status == .conflict && clash.errorCode == "IDENTITY_IN_USE")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: other.accessToken).json["auth_providers"] as? [String] == ["test"])
        }
    }

    @Test func withoutRequiredVerificationLoginWorksAtOnce() async throws {
        let h = try await T.harness(#"{"mail":{"transport":"outbox"},"password":{"require_email_verification":false}}"#)
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "fast@x.io", "password": T.password]).status == .accepted)
            let login = try await T.login(client, "fast@x.io", T.password)
            #expect(login.status == .ok)
            #expect(try login.decode(SessionResponse.self).user.emailVerified == false)
            let code = try #require(try T.lastCode(h, to: "fast@x.io"))
            let verified = try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": "fast@x.io", "code": code, "password": T.password])
            #expect(try verified.decode(SessionResponse.self).user.emailVerified)
        }
    }

    @Test func noPasswordReachesTheLog() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "log@x.io", password: "tell nobody 8472")
            _ = try await T.login(client, "log@x.io", "tell nobody 8472")
            _ = try await T.login(client, "log@x.io", "also secret 9931")
        }
        #expect(!h.logs.contains("tell nobody") && !h.logs.contains("also secret"))
    }

    @Test func argon2ConfigHasOWASPFloors() async throws {
        await #expect(throws: ConfigError.self) { _ = try await T.harness(#"{"password":{"argon2":{"memory_kib":1024}}}"#) }
        await #expect(throws: ConfigError.self) { _ = try await T.harness(#"{"password":{"argon2":{"ops_limit":1}}}"#) }
    }
}
