@testable import AuthdCore
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// The OpenID clients over the admin API (contract §13), and the secret rotation's grace on the
/// injected clock.
struct OpenIDClientAdminTests {
    static func call(
        _ client: HarnessClient, _ method: HTTPRequest.Method, _ path: String, key: String?, json: [String: Any]? = nil
    ) async throws -> HarnessResponse {
        try await client.send(method, "/api/v1/admin/clients" + path, json: json, bearer: key)
    }

    @Test func aServiceKeyRegistersChangesRotatesAndDeletesAClient() async throws {
        let h = try await TestHarness.make()
        let key = try await ServiceKeys(store: h.server.store, clock: h.clock).create(name: "ops")
        try await h.test { client async throws in
            #expect(try await Self.call(client, .get, "", key: nil).status == .unauthorized)
            let created = try await Self.call(
                client, .post, "", key: key,
                json: ["name": "Grafana", "redirect_uris": ["https://grafana.example.com/login/generic_oauth"], "claims": ["groups"]])
            #expect(created.status == .created)
            let id = try #require(created.json["client_id"] as? String)
            let secret = try #require(created.json["client_secret"] as? String)
            #expect(secret.hasPrefix("authd_cs_") && created.json["claims"] as? [String] == ["groups"] && created.json["public"] as? Bool == false)
            #expect(created.json["secret_hash"] == nil && created.json["id_token_alg"] as? String == "RS256")

            let listed = try await Self.call(client, .get, "", key: key)
            let rows = try #require(listed.json["clients"] as? [[String: Any]])
            #expect(rows.map { $0["client_id"] as? String } == [id] && rows[0]["client_secret"] == nil && !String(buffer: listed.body).contains("secret_hash"))

            let changed = try await Self.call(
                client, .patch, "/" + id, key: key, json: ["post_logout_redirect_uris": ["https://grafana.example.com/login"], "first_party": true])
            #expect(changed.status == .ok && changed.json["first_party"] as? Bool == true)
            #expect(changed.json["post_logout_redirect_uris"] as? [String] == ["https://grafana.example.com/login"])
            #expect(changed.json["claims"] as? [String] == ["groups"])
            let shown = try await Self.call(client, .get, "/" + id, key: key)
            #expect(shown.json["first_party"] as? Bool == true)

            let rotated = try await Self.call(client, .post, "/\(id)/rotate-secret", key: key, json: ["grace": 60])
            let next = try #require(rotated.json["client_secret"] as? String)
            #expect(rotated.status == .ok && next != secret)
            let clients = OpenIDClients(store: h.server.store, clock: h.clock, audience: h.server.kernel.config.audience)
            #expect(try await clients.authenticate(id: id, secret: secret) != nil)
            #expect(try await clients.authenticate(id: id, secret: next) != nil)
            h.clock.advance(by: 61)
            #expect(try await clients.authenticate(id: id, secret: secret) == nil)
            #expect(try await clients.authenticate(id: id, secret: next) != nil)
            _ = try await Self.call(client, .post, "/\(id)/rotate-secret", key: key)
            #expect(try await clients.authenticate(id: id, secret: next) == nil, "no grace: the old secret stops at once")

            #expect(try await Self.call(client, .delete, "/" + id, key: key).status == .noContent)
            #expect(try await Self.call(client, .delete, "/" + id, key: key).status == .notFound)
            #expect(try await Self.call(client, .get, "/" + id, key: key).status == .notFound)
            #expect(try await Self.call(client, .patch, "/" + id, key: key, json: ["name": "x"]).status == .notFound)
            let audit = try h.audit(event: "admin_api").compactMap { $0["reason"] as? String }
            #expect(audit.contains("create client \(id)") && audit.contains("rotate client secret \(id)") && audit.contains("delete client \(id)"))
        }
    }

    @Test(arguments: [
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"redirect_uri":"x"}"#, "redirect_uri"),
        (#"{"name":"A","redirect_uris":["http://a.example/cb"]}"#, "redirect_uris"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb#frag"]}"#, "redirect_uris"),
        (#"{"name":"A","redirect_uris":[]}"#, "redirect_uris"),
        (#"{"redirect_uris":["https://a.example/cb"]}"#, "name"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"claims":["email"]}"#, "claims"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"claims":["no spaces"]}"#, "claims"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"public":true,"pkce_optional":true}"#, "pkce_optional"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"id_token_alg":"HS256"}"#, "id_token_alg"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"post_logout_redirect_uris":["javascript:alert(1)"]}"#, "post_logout_redirect_uris"),
        (#"{"name":5,"redirect_uris":["https://a.example/cb"]}"#, "name"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"logo_uri":"http://a.example/logo.png"}"#, "logo_uri"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"logo_uri":"data:text/html;base64,PGI+"}"#, "logo_uri"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"logo_uri":"data:image/png,raw"}"#, "logo_uri"),
        (#"{"name":"A","redirect_uris":["https://a.example/cb"],"logo_uri":"javascript:alert(1)"}"#, "logo_uri"),
    ] as [(String, String)])
    func aBadRegistrationNamesItsField(body: String, field: String) async throws {
        let h = try await TestHarness.make()
        let key = try await ServiceKeys(store: h.server.store, clock: h.clock).create(name: "ops")
        try await h.test { client async throws in
            let answer = try await client.send(.post, "/api/v1/admin/clients", raw: body, bearer: key)
            #expect(answer.status == .badRequest && AdminAPITests.field(answer) == field, "\(String(buffer: answer.body))")
        }
    }

    /// A logo is an `https` URL (≤ 2048 characters) or a base64 `data:` URI of a PNG, SVG, JPEG or
    /// WebP image (≤ 64 KiB); "" removes it (contract §18).
    @Test func aLogoIsAnHTTPSURLOrASmallDataImage() async throws {
        #expect(OpenIDClientSettings.isValidLogo("https://cdn.example.com/logo.svg"))
        #expect(OpenIDClientSettings.isValidLogo("data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="))
        #expect(!OpenIDClientSettings.isValidLogo("https://cdn.example.com/" + String(repeating: "a", count: 2048)))
        #expect(!OpenIDClientSettings.isValidLogo("data:image/png;base64," + String(repeating: "A", count: 64 * 1024)))
        #expect(!OpenIDClientSettings.isValidLogo("https://cdn.example.com/a b.png"))
        #expect(!OpenIDClientSettings.isValidLogo("data:image/gif;base64,R0lGOD=="))
        let h = try await TestHarness.make()
        let clients = OpenIDClients(store: h.server.store, clock: h.clock, audience: "authd")
        var settings = OpenIDClientSettings()
        (settings.name, settings.redirectURIs, settings.logoURI) = ("App", ["https://app.example.com/cb"], "https://cdn.example.com/logo.svg")
        let id = try await clients.create(settings).client.id
        #expect(try await clients.find(id)?.logoURI == "https://cdn.example.com/logo.svg", "kept in the client's record")
        var removing = OpenIDClientSettings()
        removing.logoURI = ""
        _ = try await clients.update(id, removing)
        #expect(try await clients.find(id)?.logoURI == nil)
    }

    /// About one random id in 64 began with `-`, and `authd clients delete ID` took it for an option.
    @Test func noClientIDBeginsWithADash() async throws {
        let h = try await TestHarness.make()
        let clients = OpenIDClients(store: h.server.store, clock: h.clock, audience: "authd")
        var settings = OpenIDClientSettings()
        (settings.name, settings.redirectURIs, settings.isPublic) = ("App", ["https://app.example.com/cb"], true)
        for _ in 0..<400 {
            let id = try await clients.create(settings).client.id
            #expect(!id.hasPrefix("-"), "\(id)")
        }
    }

    @Test func aClientStaysPublicOrConfidential() async throws {
        let h = try await TestHarness.make()
        let key = try await ServiceKeys(store: h.server.store, clock: h.clock).create(name: "ops")
        try await h.test { client async throws in
            let created = try await Self.call(client, .post, "", key: key, json: ["name": "App", "redirect_uris": ["com.example.app:/cb"], "public": true])
            let id = try #require(created.json["client_id"] as? String)
            #expect(created.json["client_secret"] == nil)
            let flipped = try await Self.call(client, .patch, "/" + id, key: key, json: ["public": false])
            #expect(flipped.status == .badRequest && AdminAPITests.field(flipped) == "public")
            let rotated = try await Self.call(client, .post, "/\(id)/rotate-secret", key: key)
            #expect(rotated.status == .conflict && rotated.errorCode == "INVALID_STATE")
        }
    }
}
