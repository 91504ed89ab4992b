import AuthdCore
import AuthdServer
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Testing

/// API keys (contract §6) and the limited sessions they make (§5).
struct APIKeyTests {
    static func claims(_ token: String) -> [String: Any] {
        var part = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while part.count % 4 != 0 { part += "=" }
        return (try? JSONSerialization.jsonObject(with: Data(base64Encoded: part)!)) as? [String: Any] ?? [:]
    }

    static func create(_ client: HarnessClient, _ bearer: String, _ body: [String: Any] = ["name": "Photo frame"]) async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/api-keys", json: body, bearer: bearer)
    }

    static func exchange(_ client: HarnessClient, _ key: String) async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/api-keys/exchange", json: ["api_key": key])
    }

    static func reason(_ r: HarnessResponse) -> String? {
        ((r.json["error"] as? [String: Any])?["details"] as? [String: Any])?["reason"] as? String
    }

    @Test func aKeyIsShownOnceListedAndExchangedForAShortToken() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let created = try await Self.create(client, s.accessToken, ["name": "  Photo frame ", "expires_in": 86_400])
            #expect(created.status == .created)
            #expect(created.headers[.cacheControl] == "no-store")
            let key = try #require(created.json["api_key"] as? String)
            #expect(key.hasPrefix("authd_ak_") && key.count >= 9 + 43)
            #expect(created.json["prefix"] as? String == String(key.dropFirst(9).prefix(8)))
            #expect(created.json["name"] as? String == "Photo frame")
            #expect(created.json["expires_at"] as? String != nil && created.json["created_at"] as? String != nil)
            let id = try #require(created.json["id"] as? String)

            let listed = try await client.send(.get, "/api/v1/auth/api-keys", bearer: s.accessToken)
            let item = try #require((listed.json["api_keys"] as? [[String: Any]])?.first)
            #expect(item["id"] as? String == id && item["prefix"] as? String == created.json["prefix"] as? String)
            #expect(item["last_used_at"] is NSNull && item["api_key"] == nil)
            let sessions = try await client.send(.get, "/api/v1/auth/sessions", bearer: s.accessToken).json["sessions"] as? [[String: Any]]
            #expect(Set(sessions?.compactMap { $0["kind"] as? String } ?? []) == ["session", "api_key"])

            h.clock.advance(by: 120)
            let exchanged = try await Self.exchange(client, key)
            #expect(exchanged.status == .ok && exchanged.headers[.cacheControl] == "no-store")
            #expect(exchanged.json["token_type"] as? String == "Bearer" && exchanged.json["expires_in"] as? Int == 300)
            #expect(exchanged.json["refresh_token"] == nil)
            let token = try #require(exchanged.accessToken)
            let claims = Self.claims(token)
            #expect(claims["sid"] as? String == id && claims["amr"] as? [String] == ["api_key"] && claims["sub"] as? String == s.user.id)
            #expect((claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0) == 300)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).json["id"] as? String == s.user.id)
            let used = try await client.send(.get, "/api/v1/auth/api-keys", bearer: s.accessToken).json["api_keys"] as? [[String: Any]]
            #expect(used?.first?["last_used_at"] as? String != nil)
        }
    }

    @Test func aKeysSessionIsLimited() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let key = try #require(try await Self.create(client, s.accessToken).json["api_key"] as? String)
            let token = try #require(try await Self.exchange(client, key).accessToken)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .ok)
            #expect(try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": "Frame"], bearer: token).status == .ok)
            #expect(try await client.send(.get, "/api/v1/auth/sessions", bearer: token).status == .ok)
            let other = try #require((try await client.send(.get, "/api/v1/auth/sessions", bearer: s.accessToken).json["sessions"] as? [[String: Any]])?
                .first { $0["kind"] as? String == "session" }?["id"] as? String)
            for (method, path, body) in [
                (HTTPRequest.Method.post, "/api/v1/auth/api-keys", ["name": "another"]), (.get, "/api/v1/auth/api-keys", nil),
                (.get, "/api/v1/auth/approvals", nil), (.delete, "/api/v1/auth/account", nil), (.delete, "/api/v1/auth/sessions/\(other)", nil),
                (.get, "/api/v1/auth/approvals/stream", nil), (.post, "/api/v1/auth/mfa/verify", ["challenge": "x"]),
            ] as [(HTTPRequest.Method, String, [String: Any]?)] {
                let r = try await client.send(method, path, json: body, bearer: token)
                #expect(r.status == .forbidden && r.errorCode == "FORBIDDEN", "\(method) \(path)")
            }
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .ok, "the full session is untouched")
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: token).status == .noContent)
            #expect(Self.reason(try await Self.exchange(client, key)) == "revoked", "logging out of a key's session ends the key")
        }
    }

    @Test func creatingAKeyNeedsAFreshFullSession() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        h.clock.advance(by: 601)
        try await h.test { client async throws in
            let stale = try await Self.create(client, s.accessToken)
            #expect(stale.status == .forbidden && stale.errorCode == "REAUTH_REQUIRED")
            #expect(try await Self.create(client, "nope").status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/api-keys", json: ["name": "x"]).status == .unauthorized)
        }
    }

    @Test func badBodiesAndTheLimitPerUser() async throws {
        let h = try await TestHarness.make(config: #"{"mail":{"transport":"outbox"},"api_keys":{"max_per_user":2}}"#)
        let s = try await h.signIn()
        try await h.test { client async throws in
            for body: [String: Any] in [
                [:], ["name": ""], ["name": "   "], ["name": "a\u{7}b"], ["name": String(repeating: "x", count: 101)], ["name": 3],
                ["name": "ok", "expires_in": 59], ["name": "ok", "expires_in": 400_000_000], ["name": "ok", "expires_in": "soon"],
            ] {
                let r = try await Self.create(client, s.accessToken, body)
                #expect(r.status == .badRequest && r.errorCode == "INVALID_REQUEST", "\(body)")
            }
            #expect(try await Self.create(client, s.accessToken).status == .created)
            #expect(try await Self.create(client, s.accessToken).status == .created)
            let third = try await Self.create(client, s.accessToken)
            #expect(third.status == .conflict && third.errorCode == "INVALID_STATE")
            #expect(try await client.send(.delete, "/api/v1/auth/api-keys/\(UUID().uuidString)", bearer: s.accessToken).status == .notFound)
            #expect(try await client.send(.delete, "/api/v1/auth/api-keys/not-a-uuid", bearer: s.accessToken).status == .notFound)
            let session = s.user.id  // a user id is no key id
            #expect(try await client.send(.delete, "/api/v1/auth/api-keys/\(session)", bearer: s.accessToken).status == .notFound)
        }
    }

    @Test func anEndedKeySaysWhy() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn()
        try await h.test { client async throws in
            for bad in ["", "authd_ak_", "authd_ak_" + String(repeating: "A", count: 43), "sk_live_x", String(repeating: "a", count: 10_000)] {
                let r = try await Self.exchange(client, bad)
                #expect(r.status == .unauthorized && r.errorCode == "INVALID_API_KEY" && Self.reason(r) == "unknown")
            }
            let revoked = try await Self.create(client, s.accessToken)
            let key = try #require(revoked.json["api_key"] as? String)
            let token = try #require(try await Self.exchange(client, key).accessToken)
            #expect(try await client.send(.delete, "/api/v1/auth/api-keys/\(revoked.json["id"] as! String)", bearer: s.accessToken).status == .noContent)
            #expect(Self.reason(try await Self.exchange(client, key)) == "revoked")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .unauthorized, "its tokens stop working")

            let short = try #require(try await Self.create(client, s.accessToken, ["name": "short", "expires_in": 60]).json["api_key"] as? String)
            h.clock.advance(by: 61)
            #expect(Self.reason(try await Self.exchange(client, short)) == "expired")
            try await h.kernel.sessions.purgeExpired()
            #expect(Self.reason(try await Self.exchange(client, short)) == "expired", "still after the purge")
            let r = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": key])
            #expect(r.errorCode == "INVALID_REFRESH_TOKEN")
        }
    }

    @Test func aKeyIsNeverARefreshToken() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let key = try #require(try await Self.create(client, s.accessToken).json["api_key"] as? String)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": key]).errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await Self.exchange(client, key).status == .ok, "a refused refresh did not rotate or end the key")
        }
    }

    @Test func aCredentialChangeOrTheAccountsDeletionEndsEveryKey() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "bo@example.com")
        try await h.test { client async throws in
            let key = try #require(try await Self.create(client, s.accessToken).json["api_key"] as? String)
            try await h.kernel.sessions.revokeAll(of: try #require(UUID(uuidString: s.user.id)))
            #expect(Self.reason(try await Self.exchange(client, key)) == "revoked")
        }
        let h2 = try await TestHarness.make()
        let s2 = try await h2.signIn(email: "cy@example.com")
        try await h2.test { client async throws in
            let key = try #require(try await Self.create(client, s2.accessToken).json["api_key"] as? String)
            #expect(try await client.send(.delete, "/api/v1/auth/account", bearer: s2.accessToken).status == .noContent)
            #expect(Self.reason(try await Self.exchange(client, key)) == "revoked")
        }
    }

    @Test func exchangesAreLimitedPerKeyAndPerNetwork() async throws {
        let h = try await TestHarness.make(
            config: #"{"mail":{"transport":"outbox"},"api_keys":{"exchanges_per_key":{"limit":2,"window":60},"exchanges_per_ip":{"limit":5,"window":60}}}"#)
        let s = try await h.signIn()
        try await h.test { client async throws in
            let a = try #require(try await Self.create(client, s.accessToken).json["api_key"] as? String)
            #expect(try await Self.exchange(client, a).status == .ok)
            #expect(try await Self.exchange(client, a).status == .ok)
            #expect(try await Self.exchange(client, a).status == .tooManyRequests)
            #expect(try await Self.exchange(client, "authd_ak_guess").status == .unauthorized)
            #expect(try await Self.exchange(client, "authd_ak_guess").status == .unauthorized)
            let limited = try await Self.exchange(client, "authd_ak_guess")
            #expect(limited.status == .tooManyRequests && limited.errorCode == "RATE_LIMIT_EXCEEDED")
        }
    }

    @Test func onlyAHashIsStoredAndTheOwnerIsToldByMail() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        let key = try await h.test { client async throws in
            try #require(try await Self.create(client, s.accessToken, ["name": "NAS"]).json["api_key"] as? String)
        }
        let stored = try FileManager.default.contentsOfDirectory(atPath: h.folder)
            .filter { $0.hasPrefix("journal") || $0.hasPrefix("snapshot") }
            .map { try String(contentsOfFile: h.folder + "/" + $0, encoding: .utf8) }.joined()
        #expect(!stored.contains(key) && !stored.contains(String(key.dropFirst(9))))
        #expect(stored.contains(Hex.encode(SHA256.hash(key))) && stored.contains(#""kind":"api_key""#))
        let notice = try #require(try h.mail(to: "ada@example.com").last)
        #expect(notice.text.contains("an API key (NAS)"))
        let audit = try String(contentsOfFile: h.folder + "/audit.jsonl", encoding: .utf8)
        #expect(audit.contains("api_key_created") && audit.contains("NAS (authd_ak_\(key.dropFirst(9).prefix(8))…)"))
        #expect(!audit.contains(key) && !h.logs.contains(key))
    }
}
