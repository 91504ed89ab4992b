import AuthdCore
import AuthdServer
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// The admin API (contract §8), called by the app's backend with a service key.
struct AdminAPITests {
    static func admin(
        _ client: HarnessClient, _ method: HTTPRequest.Method, _ path: String, key: String?, json: [String: Any]? = nil, raw: String? = nil
    ) async throws -> HarnessResponse {
        try await client.send(method, "/api/v1/admin/" + path, json: json, raw: raw, bearer: key)
    }

    static func field(_ r: HarnessResponse) -> String? { ((r.json["error"] as? [String: Any])?["details"] as? [String: Any])?["field"] as? String }

    @Test func aServiceKeySetsAppMetadataAndTheNextRefreshCarriesIt() async throws {
        let h = try await TestHarness.make()
        let key = try await ServiceKeys(store: h.server.store, clock: h.clock).create(name: "couples-backend")
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let set = try await Self.admin(client, .patch, "users/\(s.user.id)", key: key, json: ["app_metadata": ["couple_id": "c-42"]])
            #expect(set.status == .ok && (set.json["app_metadata"] as? [String: Any])?["couple_id"] as? String == "c-42")
            #expect(set.json["disabled"] as? Bool == false && set.json["email"] as? String == "ada@example.com")
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            let token = try #require(refreshed.accessToken)
            #expect((APIKeyTests.claims(token)["app_metadata"] as? [String: Any])?["couple_id"] as? String == "c-42")
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: token)
            #expect((me.json["app_metadata"] as? [String: Any])?["couple_id"] as? String == "c-42")

            let tooBig = try await Self.admin(client, .patch, "users/\(s.user.id)", key: key, json: ["app_metadata": ["x": String(repeating: "a", count: 1100)]])
            #expect(tooBig.status == .badRequest && Self.field(tooBig) == "app_metadata")
            let empty = try await Self.admin(client, .patch, "users/\(s.user.id)", key: key, json: [:])
            #expect(empty.status == .badRequest && empty.errorCode == "INVALID_REQUEST")
            let renamed = try await Self.admin(client, .patch, "users/\(s.user.id)", key: key, json: ["display_name": "Ada L."])
            #expect(renamed.json["display_name"] as? String == "Ada L." && (renamed.json["app_metadata"] as? [String: Any])?["couple_id"] as? String == "c-42")
            let cleared = try await Self.admin(client, .patch, "users/\(s.user.id)", key: key, raw: #"{"app_metadata":null}"#)
            #expect(cleared.status == .ok && (cleared.json["app_metadata"] as? [String: Any])?.isEmpty == true)
        }
        let audit = try String(contentsOfFile: h.folder + "/audit.jsonl", encoding: .utf8)
        #expect(audit.contains("couples-backend") && audit.contains("admin_api"), "every call audited with the key's name")
        #expect(!audit.contains(key), "never the secret")
    }

    @Test func searchAndPageThroughUsers() async throws {
        let h = try await TestHarness.make()
        let key = try await ServiceKeys(store: h.server.store, clock: h.clock).create(name: "backend")
        for i in 0..<7 { _ = try await h.signIn("u\(i)", email: "user\(i)@example.com") }
        _ = try await h.signIn("other", email: "someone@elsewhere.test")
        try await h.test { client async throws in
            var seen: [String] = []
            var cursor: String?
            repeat {
                let path = "users?query=EXAMPLE.com&limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await Self.admin(client, .get, path, key: key)
                #expect(page.status == .ok)
                let users = try #require(page.json["users"] as? [[String: Any]])
                #expect(users.count <= 3)
                seen += users.compactMap { $0["id"] as? String }
                cursor = page.json["next_cursor"] as? String
            } while cursor != nil
            #expect(seen.count == 7 && Set(seen).count == 7 && seen == seen.sorted(), "every match once, in id order")
            let all = try await Self.admin(client, .get, "users", key: key)
            #expect((all.json["users"] as? [[String: Any]])?.count == 8 && all.json["next_cursor"] is NSNull)
            let none = try await Self.admin(client, .get, "users?query=nobody", key: key)
            #expect((none.json["users"] as? [[String: Any]])?.isEmpty == true)
            for (bad, field) in [("users?limit=0", "limit"), ("users?limit=201", "limit"), ("users?limit=x", "limit"), ("users?cursor=nope", "cursor"),
                                 ("users?query=" + String(repeating: "a", count: 257), "query")] {
                let r = try await Self.admin(client, .get, bad, key: key)
                #expect(r.status == .badRequest && Self.field(r) == field, "\(bad.prefix(30))")
            }
            let one = try await Self.admin(client, .get, "users/\(seen[0])", key: key)
            #expect(one.status == .ok && one.json["id"] as? String == seen[0])
            for missing in ["users/\(UUID().uuidString)", "users/not-a-uuid", "users/\(UUID().uuidString)/sessions"] {
                #expect(try await Self.admin(client, .get, missing, key: key).status == .notFound)
            }
        }
    }

    @Test func disablingEndsSessionsAndKeysAndRefusesSignIns() async throws {
        let h = try await TestHarness.make()
        let key = try await ServiceKeys(store: h.server.store, clock: h.clock).create(name: "backend")
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let apiKey = try #require(try await APIKeyTests.create(client, s.accessToken).json["api_key"] as? String)
            let listed = try await Self.admin(client, .get, "users/\(s.user.id)/sessions", key: key)
            let kinds = (listed.json["sessions"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }.sorted()
            #expect(kinds == ["api_key", "session"])
            #expect(!String(decoding: listed.body.readableBytesView, as: UTF8.self).contains(apiKey), "never the secret")

            let disabled = try await Self.admin(client, .patch, "users/\(s.user.id)", key: key, json: ["disabled": true])
            #expect(disabled.status == .ok && disabled.json["disabled"] as? Bool == true && disabled.json["disabled_at"] is String)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .unauthorized)
            let refresh = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            #expect(refresh.status == .unauthorized)
            let exchange = try await APIKeyTests.exchange(client, apiKey)
            #expect(exchange.status == .unauthorized && exchange.errorCode == "INVALID_API_KEY")
            await #expect(throws: AuthError.accountDisabled) { _ = try await h.signIn(email: "ada@example.com") }

            let enabled = try await Self.admin(client, .patch, "users/\(s.user.id)", key: key, json: ["disabled": false])
            #expect(enabled.json["disabled"] as? Bool == false)
            let again = try await h.signIn(email: "ada@example.com")
            #expect(try await Self.admin(client, .delete, "users/\(s.user.id)/sessions", key: key).status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: again.accessToken).status == .unauthorized)
            #expect(try await Self.admin(client, .delete, "users/\(s.user.id)", key: key).status == .noContent)
            #expect(try await Self.admin(client, .get, "users/\(s.user.id)", key: key).status == .notFound)
            #expect(try await Self.admin(client, .delete, "users/\(s.user.id)", key: key).status == .notFound)
        }
    }

    @Test func withoutAServiceKeyEveryCallIs401() async throws {
        let h = try await TestHarness.make()
        let keys = ServiceKeys(store: h.server.store, clock: h.clock)
        let key = try await keys.create(name: "backend")
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let calls: [(HTTPRequest.Method, String)] = [
                (.get, "users"), (.get, "users/\(s.user.id)"), (.patch, "users/\(s.user.id)"), (.delete, "users/\(s.user.id)"),
                (.get, "users/\(s.user.id)/sessions"), (.delete, "users/\(s.user.id)/sessions"),
            ]
            for (method, path) in calls {
                for bad in [nil, "authd_sk_guess", s.accessToken] as [String?] {
                    let r = try await Self.admin(client, method, path, key: bad, json: method == .patch ? ["disabled": true] : nil)
                    #expect(r.status == .unauthorized && r.errorCode == "UNAUTHORIZED", "\(method) \(path) with \(bad?.prefix(9) ?? "nothing")")
                }
            }
            try await keys.revoke(name: "backend")
            #expect(try await Self.admin(client, .get, "users", key: key).status == .unauthorized, "a revoked key stops at once")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .ok, "nothing was changed")
        }
    }
}
