import AuthKernel
import AuthdCore
import AuthKernelTesting
import EmailProvider
import Foundation
import HTTPTypes
import PINProvider
import Synchronization
import Testing

struct PINProviderTests {
    static let config = #"{"mail":{"transport":"outbox"},"pin":{"max_attempts":3,"lockout":60}}"#

    func harness(_ config: String = Self.config, folder: String? = nil, clock: ManualClock = ManualClock()) async throws -> TestHarness {
        try await TestHarness.make(providers: [EmailProvider.self, PINProvider.self], config: config, folder: folder, clock: clock)
    }

    func anonymous(_ client: HarnessClient, device: String? = nil) async throws -> SessionResponse {
        let r = try await client.send(.post, "/api/v1/auth/anonymous", json: device.map { ["device_name": $0] })
        #expect(r.status == .ok)
        return try r.decode(SessionResponse.self)
    }

    func setPIN(_ client: HarnessClient, _ s: SessionResponse, _ pin: String, current: String? = nil) async throws -> HarnessResponse {
        var body = ["pin": pin]
        body["current_pin"] = current
        return try await client.send(.put, "/api/v1/auth/pin", json: body, bearer: s.accessToken)
    }

    func verify(_ client: HarnessClient, username: String? = nil, userID: String? = nil, pin: String) async throws -> HarnessResponse {
        var body = ["pin": pin]
        body["username"] = username
        body["user_id"] = userID
        return try await client.send(.post, "/api/v1/auth/pin/verify", json: body)
    }

    @Test func anonymousSignIn() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await anonymous(client, device: "kiosk")
            #expect(s.user.isAnonymous && s.user.email == nil && s.user.authProviders.isEmpty)
            let claims = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(s.accessToken.split(separator: ".")[1])!)) as? [String: Any]
            #expect(claims?["is_anonymous"] as? Bool == true)
            #expect(claims?["amr"] as? [String] == ["anonymous"])
            // No body at all is fine too; a body that is not JSON is not.
            #expect(try await client.send(.post, "/api/v1/auth/anonymous").status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/anonymous", raw: "nope").errorCode == "INVALID_REQUEST")
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect(me.json["is_anonymous"] as? Bool == true)
        }
    }

    @Test func anonymousSignUpsPerIPAreLimited() async throws {
        let h = try await harness(#"{"pin":{"anonymous_per_ip":{"limit":2,"window":3600}}}"#)
        try await h.test { client async throws in
            for _ in 0..<2 { _ = try await anonymous(client) }
            let r = try await client.send(.post, "/api/v1/auth/anonymous")
            #expect(r.status == .tooManyRequests && r.retryAfter == 1800)
        }
    }

    @Test func settingAPINChecksItsFormat() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await anonymous(client)
            for bad in ["123", "123456789", "12a4", "12 34", "\u{0661}\u{0662}\u{0663}\u{0664}", ""] {
                let r = try await setPIN(client, s, bad)
                #expect(r.status == .badRequest && r.errorCode == "INVALID_PIN")
            }
            #expect(try await client.send(.put, "/api/v1/auth/pin", json: ["pin": 1234], bearer: s.accessToken).errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.put, "/api/v1/auth/pin", json: ["pin": "1234"]).status == .unauthorized)
            #expect(try await setPIN(client, s, "1234").status == .noContent)
            // A well-formed new PIN once one is set still needs the current one.
            #expect(try await setPIN(client, s, "0012345").errorCode == "INVALID_REQUEST")
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect(me.json["auth_providers"] as? [String] == ["pin"])
        }
    }

    @Test func changingThePINNeedsTheCurrentOneAndEndsOtherSessions() async throws {
        let h = try await harness()
        let changes = Mutex<[String]>([])
        h.kernel.events.onCredentialChange { _, credential in changes.withLock { $0.append(credential) } }
        try await h.test { client async throws in
            let first = try await anonymous(client)
            #expect(try await setPIN(client, first, "1234").status == .noContent)
            let second = try await verify(client, userID: first.user.id, pin: "1234").decode(SessionResponse.self)

            let missing = try await setPIN(client, first, "5678")
            #expect(missing.status == .badRequest && missing.errorCode == "INVALID_REQUEST")
            let wrong = try await setPIN(client, first, "5678", current: "9999")
            #expect(wrong.status == .unauthorized && wrong.errorCode == "INVALID_CREDENTIALS")
            #expect(try await setPIN(client, first, "5678", current: "1234").status == .noContent)

            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: second.accessToken).status == .unauthorized)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: first.accessToken).status == .ok)
            #expect(try await verify(client, userID: first.user.id, pin: "1234").errorCode == "INVALID_CREDENTIALS")
            #expect(try await verify(client, userID: first.user.id, pin: "5678").status == .ok)
            // Set, then changed: the credential hooks heard of both, and of nothing refused.
            #expect(changes.withLock { $0 } == ["pin", "pin"])
        }
    }

    @Test func wrongCurrentPINsCountTowardTheLockout() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await anonymous(client)
            _ = try await setPIN(client, s, "1234")
            for _ in 0..<2 { #expect(try await setPIN(client, s, "5678", current: "0000").status == .unauthorized) }
            let locked = try await setPIN(client, s, "5678", current: "0000")
            #expect(locked.status == .tooManyRequests && locked.retryAfter == 60)
            #expect(try await setPIN(client, s, "5678", current: "1234").status == .tooManyRequests)
            #expect(try await verify(client, userID: s.user.id, pin: "1234").status == .tooManyRequests)
        }
    }

    @Test func usernames() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let a = try await anonymous(client)
            let b = try await anonymous(client)
            let ok = try await client.send(.put, "/api/v1/auth/username", json: ["username": "Ada.L_1-x"], bearer: a.accessToken)
            #expect(ok.status == .ok && ok.json["username"] as? String == "Ada.L_1-x")
            #expect(ok.json["is_anonymous"] as? Bool == true)  // anonymous users may have one
            for bad in ["ab", String(repeating: "a", count: 33), "has space", "émile", "a/b", "a@b"] {
                let r = try await client.send(.put, "/api/v1/auth/username", json: ["username": bad], bearer: b.accessToken)
                #expect(r.status == .badRequest && r.errorCode == "INVALID_REQUEST")
            }
            let taken = try await client.send(.put, "/api/v1/auth/username", json: ["username": "ada.l_1-X"], bearer: b.accessToken)
            #expect(taken.status == .conflict && taken.errorCode == "USERNAME_TAKEN")
            // Re-casing one's own name is not a collision.
            #expect(try await client.send(.put, "/api/v1/auth/username", json: ["username": "ADA.L_1-X"], bearer: a.accessToken).status == .ok)
            #expect(try await client.send(.put, "/api/v1/auth/username", json: ["username": "nobody"]).status == .unauthorized)
        }
    }

    @Test func signInWithUsernameOrUserIDAndPIN() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await anonymous(client)
            _ = try await setPIN(client, s, "246810")
            _ = try await client.send(.put, "/api/v1/auth/username", json: ["username": "kim"], bearer: s.accessToken)

            let byName = try await verify(client, username: "KIM", pin: "246810")
            #expect(byName.status == .ok)
            let session = try byName.decode(SessionResponse.self)
            #expect(session.user.id == s.user.id)
            let claims = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(session.accessToken.split(separator: ".")[1])!)) as? [String: Any]
            #expect(claims?["amr"] as? [String] == ["pin"])
            #expect(try await verify(client, userID: s.user.id.uppercased(), pin: "246810").status == .ok)

            // Unknown name, unknown id, malformed id, wrong PIN, a user without a PIN: all the same answer.
            let other = try await anonymous(client)
            for r in [
                try await verify(client, username: "nobody", pin: "246810"),
                try await verify(client, userID: UUID().uuidString, pin: "246810"),
                try await verify(client, userID: "not-a-uuid", pin: "246810"),
                try await verify(client, username: "kim", pin: "246811"),
                try await verify(client, userID: other.user.id, pin: "1234"),
            ] {
                #expect(r.status == .unauthorized && r.errorCode == "INVALID_CREDENTIALS")
                #expect((r.json["error"] as? [String: Any])?["message"] as? String == "The credentials are not correct.")
            }
            #expect(try await client.send(.post, "/api/v1/auth/pin/verify", json: ["pin": "1234"]).errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, "/api/v1/auth/pin/verify", json: ["username": "kim"]).errorCode == "INVALID_REQUEST")
        }
    }

    @Test func lockoutGrowsAndSurvivesARestart() async throws {
        let clock = ManualClock()
        let h = try await harness(clock: clock)
        let userID = try await h.test { client async throws in
            let s = try await anonymous(client)
            _ = try await setPIN(client, s, "1234")
            for _ in 0..<2 { #expect(try await verify(client, userID: s.user.id, pin: "0000").status == .unauthorized) }
            let locked = try await verify(client, userID: s.user.id, pin: "0000")
            #expect(locked.status == .tooManyRequests && locked.retryAfter == 60)
            #expect(locked.headers[.retryAfter] == "60")
            // Locked means locked, even for the right PIN.
            clock.advance(by: 30)
            let still = try await verify(client, userID: s.user.id, pin: "1234")
            #expect(still.status == .tooManyRequests && still.retryAfter == 30)
            clock.advance(by: 30)
            // The next lockout is twice as long.
            for _ in 0..<2 { _ = try await verify(client, userID: s.user.id, pin: "0000") }
            #expect(try await verify(client, userID: s.user.id, pin: "0000").retryAfter == 120)
            clock.advance(by: 10)
            return s.user.id
        }
        #expect(h.logs.contains("PIN sign-in locked"))

        // A restart does not reset the lock.
        let restarted = try await harness(folder: h.folder, clock: clock)
        try await restarted.test { client async throws in
            let r = try await verify(client, userID: userID, pin: "1234")
            #expect(r.status == .tooManyRequests && r.retryAfter == 110)
            clock.advance(by: 110)
            #expect(try await verify(client, userID: userID, pin: "1234").status == .ok)
            // A success resets the counter and the doubling.
            for _ in 0..<2 { _ = try await verify(client, userID: userID, pin: "0000") }
            #expect(try await verify(client, userID: userID, pin: "1234").status == .ok)
            for _ in 0..<2 { _ = try await verify(client, userID: userID, pin: "0000") }
            #expect(try await verify(client, userID: userID, pin: "0000").retryAfter == 60)
        }
    }

    @Test func attemptsPerIPAreLimitedAcrossUsers() async throws {
        let h = try await harness(#"{"pin":{"attempts_per_ip":{"limit":3,"window":600}}}"#)
        try await h.test { client async throws in
            for _ in 0..<3 { _ = try await verify(client, userID: UUID().uuidString, pin: "1234") }
            let r = try await verify(client, username: "someone-else", pin: "1234")
            #expect(r.status == .tooManyRequests && r.retryAfter == 200)
        }
    }

    @Test func legacyHashesVerifyAndAreRehashed() async throws {
        let h = try await harness()
        let anon = try await h.kernel.users.createAnonymous()
        let legacyHash = Hex.encode(SHA256.hash("global-salt" + "4321"))
        _ = try await h.kernel.users.update(anon.id) { user in
            try user.setSecret("pin", PINCredential(legacySalt: "global-salt", hash: legacyHash))
            user.username = "legacy"
        }
        try await h.test { client async throws in
            #expect(try await verify(client, username: "legacy", pin: "1234").errorCode == "INVALID_CREDENTIALS")
            #expect(try await verify(client, username: "legacy", pin: "4321").status == .ok)
            let stored = try await h.kernel.users.user(id: anon.id)?.secret("pin", as: PINCredential.self)
            #expect(stored?.legacySalt == nil && stored?.salt?.count == 32)
            #expect(stored?.hash != legacyHash)
            #expect(stored?.failures == 0)
            #expect(try await verify(client, username: "legacy", pin: "4321").status == .ok)
        }
    }

    @Test func theStoredPINNeedsThePepper() async throws {
        let h = try await harness()
        let s = try await h.test { client async throws in
            let s = try await anonymous(client)
            _ = try await setPIN(client, s, "1234")
            return s
        }
        let pepper = try #require(FileManager.default.contents(atPath: h.folder + "/keys/pin-pepper.key"))
        #expect(pepper.count == 32)
        let mode = try FileManager.default.attributesOfItem(atPath: h.folder + "/keys/pin-pepper.key")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let store = try String(contentsOfFile: h.folder + "/snapshot.json", encoding: .utf8)
        #expect(!store.contains(Hex.encode([UInt8](pepper))))
        let restarted = try await harness(folder: h.folder)
        let credential = try #require(try await restarted.kernel.users.user(id: UUID(uuidString: s.user.id)!)?.secret("pin", as: PINCredential.self))
        await restarted.server.close()
        let salt = try #require(credential.salt.flatMap(Hex.decode))
        // Not a plain salted hash, and only the pepper reproduces it.
        #expect(credential.hash != Hex.encode(SHA256.hash(salt + Array("1234".utf8))))
        #expect(credential.matches("1234", pepper: [UInt8](pepper)))
        #expect(!credential.matches("1234", pepper: SecureRandom.bytes(32)))
    }

    @Test func anAnonymousUserUpgradesByEmailKeepingItsID() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await anonymous(client)
            _ = try await setPIN(client, s, "1234")
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "up@grade.io"])
            let code = try #require(h.mail().last?.code)
            let linked = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "up@grade.io", "code": code], bearer: s.accessToken)
            #expect(linked.status == .ok)
            let user = try linked.decode(SessionResponse.self).user
            #expect(user.id == s.user.id)
            #expect(!user.isAnonymous)
            #expect(user.authProviders == ["pin", "email"])
            #expect(user.email == "up@grade.io")
            // The PIN still works for the now permanent user.
            #expect(try await verify(client, userID: s.user.id, pin: "1234").status == .ok)
        }
    }

    @Test func upgradingWithAnEmailThatBelongsToSomeoneElseChangesNothing() async throws {
        let h = try await harness()
        let owner = try await h.signIn("owner", email: "mine@b.co")
        try await h.test { client async throws in
            let s = try await anonymous(client)
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "mine@b.co"])
            let code = try #require(h.mail().last?.code)
            let r = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "mine@b.co", "code": code], bearer: s.accessToken)
            #expect(r.status == .conflict && r.errorCode == "IDENTITY_IN_USE")
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect(me.status == .ok && me.json["is_anonymous"] as? Bool == true && me.json["email"] is NSNull)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: owner.accessToken).json["auth_providers"] as? [String] == ["test"])
        }
    }

    @Test func noPINReachesTheLog() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await anonymous(client)
            _ = try await setPIN(client, s, "86420")
            _ = try await verify(client, userID: s.user.id, pin: "86420")
            _ = try await verify(client, userID: s.user.id, pin: "97531")
        }
        #expect(!h.logs.contains("86420") && !h.logs.contains("97531"))
    }
}
