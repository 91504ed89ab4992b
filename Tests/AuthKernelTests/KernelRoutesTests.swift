import AuthdCore
import AuthdServer
@testable import AuthStorage
import AuthKernel
import FileStore
import AuthKernelTesting
import Foundation
import HTTPTypes
import Testing

struct KernelRoutesTests {
    @Test func healthJWKSAndProviders() async throws {
        let h = try await TestHarness.make()
        try await h.test { client async throws in
            let health = try await client.send(.get, "/health")
            #expect(health.status == .ok)
            #expect(health.json["status"] as? String == "ok")
            let jwks = try await client.send(.get, "/.well-known/jwks.json")
            let key = (jwks.json["keys"] as? [[String: String]])?.first
            #expect(key?["kty"] == "OKP" && key?["crv"] == "Ed25519" && key?["alg"] == "EdDSA" && key?["use"] == "sig")
            #expect(key?["kid"] == h.server.keyRing.active.kid)
            #expect(key?["d"] == nil)
            let providers = try await client.send(.get, "/api/v1/auth/providers")
            #expect(providers.json["providers"] as? [String] == [])
        }
    }

    @Test func meNeedsALiveSessionAndAGenuineToken() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "a@b.c")
        try await h.test { client async throws in
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect(me.status == .ok)
            #expect(me.json["email"] as? String == "a@b.c")
            #expect(me.json["id"] as? String == s.user.id)
            #expect(me.json.keys.contains("display_name"))
            for bad in [nil, "", "garbage", s.accessToken + "x"] as [String?] {
                let r = try await client.send(.get, "/api/v1/auth/me", bearer: bad)
                #expect(r.status == .unauthorized)
                #expect(r.errorCode == "UNAUTHORIZED")
            }
            let basic = try await client.execute(uri: "/api/v1/auth/me", method: .get, headers: [.authorization: "Basic abc"])
            #expect(basic.status == .unauthorized)
        }
    }

    @Test func anExpiredAccessTokenIsRefused() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn()
        h.clock.advance(by: 3600 + 31)
        try await h.test { client async throws in
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect(me.status == .unauthorized)
        }
    }

    @Test func aCachedTokenStillExpiresAndStillNeedsItsSession() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn()
        try await h.test { client async throws in
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .ok)  // now cached
            h.clock.advance(by: 3600 + 31)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .unauthorized)
        }
        let cache = VerifiedTokenCache(capacity: 4)
        let claims = AccessTokenClaims(iss: "i", aud: "a", sub: "s", sid: "x", iat: 0, exp: 100, jti: "j", amr: [], isAnonymous: false)
        let entry = VerifiedTokenCache.Entry(claims: claims, userID: UUID(), sessionID: UUID())
        for i in 0..<10 { cache.insert("t\(i)", entry: entry, now: Date(timeIntervalSince1970: 50)) }
        #expect(cache.count <= 4)
        #expect(cache.entry(for: "t9", now: Date(timeIntervalSince1970: 50), skew: 0) == entry)
        #expect(cache.entry(for: "t9", now: Date(timeIntervalSince1970: 100), skew: 0) == nil)
    }

    @Test func patchMeChangesTheDisplayName() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn()
        try await h.test { client async throws in
            let ok = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": "  Anna  "], bearer: s.accessToken)
            #expect(ok.status == .ok)
            #expect(ok.json["display_name"] as? String == "Anna")
            let cleared = try await client.send(.patch, "/api/v1/auth/me", raw: #"{"display_name":null}"#, bearer: s.accessToken)
            #expect(cleared.json["display_name"] is NSNull)
            let long = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": String(repeating: "x", count: 101)], bearer: s.accessToken)
            #expect(long.status == .badRequest && long.errorCode == "INVALID_REQUEST")
            // Counted in code points as sent, as the schema counts: one character carrying 150 combining
            // marks is 151, and spaces around 99 letters make 101.
            let zalgo = "Z" + String(repeating: "\u{0301}", count: 150)
            #expect(zalgo.count == 1)
            let marks = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": zalgo], bearer: s.accessToken)
            #expect(marks.status == .badRequest && marks.errorCode == "INVALID_REQUEST")
            #expect((marks.json["error"] as? [String: Any])?["message"] as? String == "The field `display_name` must be at most 100 characters (Unicode code points).")
            let padded = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": " " + String(repeating: "x", count: 99) + " "], bearer: s.accessToken)
            #expect(padded.status == .badRequest && padded.errorCode == "INVALID_REQUEST")
            let longest = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": "Ž" + String(repeating: "x", count: 98) + "\u{0301}"], bearer: s.accessToken)
            #expect(longest.status == .ok)
            let control = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": "a\u{7}b"], bearer: s.accessToken)
            #expect(control.status == .badRequest)
            let missing = try await client.send(.patch, "/api/v1/auth/me", json: [:], bearer: s.accessToken)
            #expect(missing.status == .badRequest && missing.errorCode == "INVALID_REQUEST")
            let wrongType = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": 5], bearer: s.accessToken)
            #expect(wrongType.status == .badRequest)
            #expect((wrongType.json["error"] as? [String: Any])?["message"] as? String == "The field `display_name` must be a string.")
            #expect(try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": "x"]).status == .unauthorized)
        }
    }

    @Test func refreshRotatesAndTheOldTokenIsReuseAfterTheGrace() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn()
        try await h.test { client async throws in
            let r1 = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            #expect(r1.status == .ok)
            let rotated = try r1.decode(SessionResponse.self)
            #expect(rotated.refreshToken != s.refreshToken)
            #expect(rotated.tokenType == "Bearer" && rotated.expiresIn == 3600)
            #expect(rotated.user.id == s.user.id)

            // Within the grace (a racing request from the same device): succeeds.
            h.clock.advance(by: 5)
            let racing = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            #expect(racing.status == .ok)

            // After the grace: reuse, and the whole session ends.
            h.clock.advance(by: 11)
            let reused = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            #expect(reused.status == .unauthorized && reused.errorCode == "REFRESH_TOKEN_REUSED")
            let afterwards = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": rotated.refreshToken])
            #expect(afterwards.errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: rotated.accessToken).status == .unauthorized)
        }
    }

    @Test func refreshErrors() async throws {
        let h = try await TestHarness.make(config: #"{"tokens":{"refresh_ttl":100,"refresh_rate":{"limit":2,"window":60}}}"#)
        let s = try await h.signIn()
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": "nope"]).errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: [:]).errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": 42]).errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, "/api/v1/auth/refresh", raw: "{oops").errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, "/api/v1/auth/refresh").errorCode == "INVALID_REQUEST")

            // Per-session rate limit, with retry_after in body and header.
            var token = s.refreshToken
            for _ in 0..<2 {
                token = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": token]).decode(SessionResponse.self).refreshToken
            }
            let limited = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": token])
            #expect(limited.status == .tooManyRequests && limited.errorCode == "RATE_LIMIT_EXCEEDED")
            #expect(limited.retryAfter == 30)
            #expect(limited.headers[.retryAfter] == "30")

            // The refresh token dies with its session's expiry.
            h.clock.advance(by: 101)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": token]).errorCode == "INVALID_REFRESH_TOKEN")
        }
    }

    @Test func logoutEndsTheSessionAtOnce() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn()
        let other = try await h.signIn()
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/logout").status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: s.accessToken).status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .unauthorized)
            let refresh = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            #expect(refresh.errorCode == "INVALID_REFRESH_TOKEN")
            // Other sessions of the same user go on.
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: other.accessToken).status == .ok)
        }
    }

    @Test func sessionsCanBeListedAndRevoked() async throws {
        let h = try await TestHarness.make()
        let phone = try await h.signIn(device: "phone")
        let laptop = try await h.signIn(device: "laptop")
        let stranger = try await h.signIn("stranger")
        try await h.test { client async throws in
            let list = try await client.send(.get, "/api/v1/auth/sessions", bearer: phone.accessToken)
            let sessions = list.json["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.count == 2)
            #expect(sessions.first { $0["current"] as? Bool == true }?["device_name"] as? String == "phone")
            #expect(sessions.allSatisfy { $0.keys.contains("platform") && $0["created_at"] is String && $0["last_used_at"] is String })
            let laptopID = sessions.first { $0["device_name"] as? String == "laptop" }?["id"] as? String ?? ""

            // Someone else's session or nonsense: 404.
            let strangers = try await client.send(.get, "/api/v1/auth/sessions", bearer: stranger.accessToken)
            let strangerID = (strangers.json["sessions"] as? [[String: Any]])?.first?["id"] as? String ?? ""
            #expect(try await client.send(.delete, "/api/v1/auth/sessions/\(strangerID)", bearer: phone.accessToken).errorCode == "NOT_FOUND")
            #expect(try await client.send(.delete, "/api/v1/auth/sessions/not-a-uuid", bearer: phone.accessToken).status == .notFound)

            #expect(try await client.send(.delete, "/api/v1/auth/sessions/\(laptopID)", bearer: phone.accessToken).status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: laptop.accessToken).status == .unauthorized)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: phone.accessToken).status == .ok)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: stranger.accessToken).status == .ok)
        }
    }

    @Test func deletingTheAccountRemovesEverything() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "gone@example.com")
        let second = try await h.signIn(email: "gone@example.com")
        try await h.test { client async throws in
            #expect(try await client.send(.delete, "/api/v1/auth/account", bearer: s.accessToken).status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: second.accessToken).status == .unauthorized)
            let refresh = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": second.refreshToken])
            #expect(refresh.errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await h.kernel.users.user(email: "gone@example.com") == nil)
            #expect(try await h.kernel.users.user(identity: Identity(provider: "test", subject: "someone")) == nil)
        }
    }

    @Test func bodiesOver64KiBGet413AndUnknownRoutes404() async throws {
        let h = try await TestHarness.make()
        try await h.test { client async throws in
            let big = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": String(repeating: "a", count: 70_000)])
            #expect(big.status == .contentTooLarge && big.errorCode == "PAYLOAD_TOO_LARGE")
            let unknown = try await client.send(.get, "/api/v1/auth/nothing")
            #expect(unknown.status == .notFound && unknown.errorCode == "NOT_FOUND")
            #expect(unknown.headers[.contentType]?.hasPrefix("application/json") == true)
        }
    }

    @Test func writesAnswer503WhileTheDiskIsFullReadsGoOnAndWritesResumeAfter() async throws {
        // Every refresh refused while the store recovers still counts against the session's refresh
        // limit, and this clock stands still: on a loaded machine the default 30 would run out first.
        let h = try await TestHarness.make(config: #"{"mail":{"transport":"outbox"},"tokens":{"refresh_rate":{"limit":100000,"window":60}}}"#)
        let s = try await h.signIn()
        h.faults.setDiskFull(true)
        try await h.test { client async throws in
            let refresh = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            #expect(refresh.status == .serviceUnavailable && refresh.errorCode == "UNAVAILABLE")
            #expect(((refresh.json["error"] as? [String: Any])?["details"] as? [String: Any])?["reason"] as? String == "store")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: s.accessToken).status == .serviceUnavailable)
            h.faults.setDiskFull(false)
            var answer = refresh
            for _ in 0..<2400 where answer.status == .serviceUnavailable {  // recovery: up to two minutes on a loaded machine
                try await Task.sleep(for: .milliseconds(50))
                answer = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            }
            // The refresh answered 503 did not use the token up.
            #expect(answer.status == .ok, "\(answer.status) \(answer.errorCode ?? "-"); log: \(h.logs.all.suffix(15))")
        }
        #expect(h.logs.contains("refusing a write (503)"))
        #expect(h.logs.contains("writes resumed"))
    }

    @Test func noTokenEverReachesTheLog() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "a@b.c")
        let rotated = try await h.test { client async throws in
            _ = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            _ = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken + "x")
            return try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken]).decode(SessionResponse.self)
        }
        let secrets = [s.accessToken, s.refreshToken, rotated.accessToken, rotated.refreshToken]
        for secret in secrets {
            #expect(!h.logs.contains(secret))
            #expect(!h.logs.contains(String(secret.prefix(20))))
        }
        #expect(h.logs.contains(s.user.id))  // user ids are logged
    }
}

@testable import AuthKernel
struct BearerHeaderTests {
    @Test func parsesTheBearerScheme() {
        #expect(BearerAuthenticator.bearerToken("Bearer abc") == "abc")
        #expect(BearerAuthenticator.bearerToken("bearer  abc ") == "abc")
        #expect(BearerAuthenticator.bearerToken("BEARER abc") == "abc")
        #expect(BearerAuthenticator.bearerToken("Basic abc") == nil)
        #expect(BearerAuthenticator.bearerToken("Bearer    ") == nil)
        #expect(BearerAuthenticator.bearerToken("Bearerabc") == nil)
        #expect(BearerAuthenticator.bearerToken("Bear") == nil)
    }
}
