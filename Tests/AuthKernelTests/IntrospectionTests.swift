import AuthdCore
import AuthdServer
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// `POST /oauth/introspect` (RFC 7662) for resource servers holding a service key (contract §7, §8).
struct IntrospectionTests {
    static func introspect(_ client: HarnessClient, _ token: String, serviceKey: String?) async throws -> HarnessResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let serviceKey { headers[.authorization] = "Bearer \(serviceKey)" }
        let body = "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        return try await client.execute(uri: "/oauth/introspect", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    @Test func aServiceKeyLearnsWhetherATokenOrAnAPIKeyIsStillActive() async throws {
        let h = try await TestHarness.make()
        let keys = ServiceKeys(store: h.server.store, clock: h.clock)
        let service = try await keys.create(name: "photo-backend")
        #expect(service.hasPrefix("authd_sk_") && service.count >= 9 + 43)
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let active = try await Self.introspect(client, s.accessToken, serviceKey: service)
            #expect(active.status == .ok && active.headers[.cacheControl] == "no-store")
            #expect(active.json["active"] as? Bool == true && active.json["sub"] as? String == s.user.id)
            #expect(active.json["amr"] as? [String] == ["test"] && active.json["token_type"] as? String == "Bearer" && active.json["exp"] is Int)

            let created = try await client.send(.post, "/api/v1/auth/api-keys", json: ["name": "NAS"], bearer: s.accessToken)
            let apiKey = try #require(created.json["api_key"] as? String)
            let key = try await Self.introspect(client, apiKey, serviceKey: service)
            #expect(key.json["active"] as? Bool == true && key.json["token_type"] as? String == "api_key")
            #expect(key.json["sid"] as? String == created.json["id"] as? String && key.json["exp"] == nil)
            let exchanged = try #require(try await client.send(.post, "/api/v1/auth/api-keys/exchange", json: ["api_key": apiKey]).accessToken)
            #expect(try await Self.introspect(client, exchanged, serviceKey: service).json["amr"] as? [String] == ["api_key"])

            #expect(try await client.send(.delete, "/api/v1/auth/api-keys/\(created.json["id"] as! String)", bearer: s.accessToken).status == .noContent)
            for ended in [apiKey, exchanged, "garbage", "authd_ak_unknown", ""] where !ended.isEmpty {
                let r = try await Self.introspect(client, ended, serviceKey: service)
                #expect(r.status == .ok && r.json.count == 1 && r.json["active"] as? Bool == false, "\(ended.prefix(12))")
            }
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: s.accessToken).status == .noContent)
            #expect(try await Self.introspect(client, s.accessToken, serviceKey: service).json["active"] as? Bool == false)
        }
    }

    @Test func withoutAWorkingServiceKeyTheAnswerIs401() async throws {
        let h = try await TestHarness.make()
        let keys = ServiceKeys(store: h.server.store, clock: h.clock)
        let service = try await keys.create(name: "backend")
        let s = try await h.signIn()
        await #expect(throws: AuthError.invalidState("A service key named backend exists.")) { _ = try await keys.create(name: "backend") }
        await #expect(throws: AuthError.self) { _ = try await keys.create(name: "not a name") }
        #expect(try await keys.list().map(\.name) == ["backend"])
        try await h.test { client async throws in
            for bad in [nil, "authd_sk_guess", s.accessToken] as [String?] {
                let r = try await Self.introspect(client, s.accessToken, serviceKey: bad)
                #expect(r.status == .unauthorized && r.json["error"] as? String == "invalid_client" && r.headers[.wwwAuthenticate] == "Bearer")
            }
            let missing = try await client.execute(
                uri: "/oauth/introspect", method: .post, headers: [.authorization: "Bearer \(service)", .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token_type_hint=access_token"))
            #expect(missing.status == .badRequest && missing.json["error"] as? String == "invalid_request")
            try await keys.revoke(name: "backend")
            #expect(try await Self.introspect(client, s.accessToken, serviceKey: service).status == .unauthorized, "revoked at once")
        }
        await #expect(throws: AuthError.notFound("No service key named backend.")) { try await keys.revoke(name: "backend") }
    }
}
