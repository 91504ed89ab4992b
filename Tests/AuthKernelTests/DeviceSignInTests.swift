import AuthdCore
import AuthdServer
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// Device sign-in (RFC 8628, contract §7) through the router: OAuth's wire format, the interval the
/// server enforces, approval from a full session, and the limited session the device gets.
struct DeviceSignInTests {
    static let grant = "urn:ietf:params:oauth:grant-type:device_code"

    static func form(_ client: HarnessClient, _ path: String, _ body: String, type: String = "application/x-www-form-urlencoded") async throws -> HarnessResponse {
        try await client.execute(uri: path, method: .post, headers: [.contentType: type], body: ByteBuffer(string: body))
    }

    static func start(
        _ client: HarnessClient, _ body: String = "client_id=frame&device_name=Living%20room+frame&platform=linux",
        type: String = "application/x-www-form-urlencoded"
    ) async throws -> [String: Any] {
        let r = try await form(client, "/oauth/device_authorization", body, type: type)
        #expect(r.status == .ok && r.headers[.cacheControl] == "no-store")
        return r.json
    }

    static func poll(_ client: HarnessClient, _ deviceCode: String, clientID: String? = "frame") async throws -> HarnessResponse {
        var body = "grant_type=\(grant.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&device_code=\(deviceCode)"
        if let clientID { body += "&client_id=\(clientID)" }
        return try await form(client, "/oauth/token", body)
    }

    static func oauthError(_ r: HarnessResponse) -> String? {
        #expect(r.headers[.cacheControl] == "no-store")
        #expect(r.json["error_description"] is String)
        return r.json["error"] as? String
    }

    @Test func aPersonApprovesAndThePollingDeviceGetsALimitedSession() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let started = try await Self.start(client)
            let deviceCode = try #require(started["device_code"] as? String)
            let userCode = try #require(started["user_code"] as? String)
            #expect(userCode.range(of: "^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$", options: .regularExpression) != nil)
            #expect(started["verification_uri"] as? String == "http://127.0.0.1:0/device")
            #expect(started["verification_uri_complete"] as? String == "http://127.0.0.1:0/device?user_code=\(userCode)")
            #expect(started["expires_in"] as? Int == 600 && started["interval"] as? Int == 5)

            let pending = try await Self.poll(client, deviceCode)
            #expect(pending.status == .badRequest && Self.oauthError(pending) == "authorization_pending")
            #expect(Self.oauthError(try await Self.poll(client, deviceCode)) == "slow_down", "polled sooner than the interval")
            h.clock.advance(by: 6)
            #expect(Self.oauthError(try await Self.poll(client, deviceCode)) == "slow_down", "the interval had become 10 s; now 15 s")
            h.clock.advance(by: 16)
            #expect(Self.oauthError(try await Self.poll(client, deviceCode)) == "authorization_pending")

            let typed = userCode.lowercased().replacingOccurrences(of: "-", with: "")
            let shown = try await client.send(.get, "/api/v1/auth/device/\(typed)", bearer: s.accessToken)
            #expect(shown.status == .ok)
            #expect(shown.json["device_name"] as? String == "Living room frame" && shown.json["platform"] as? String == "linux")
            #expect(shown.json["client_id"] as? String == "frame" && shown.json["user_code"] as? String == userCode)
            #expect(try await client.send(.post, "/api/v1/auth/device/\(userCode)/approve", bearer: s.accessToken).status == .noContent)
            let again = try await client.send(.post, "/api/v1/auth/device/\(userCode)/approve", bearer: s.accessToken)
            #expect(again.status == .conflict && again.errorCode == "INVALID_STATE")

            h.clock.advance(by: 16)
            let session = try await Self.poll(client, deviceCode)
            #expect(session.status == .ok && session.headers[.cacheControl] == "no-store")
            #expect(session.json["token_type"] as? String == "Bearer" && session.json["refresh_token"] is String)
            #expect((session.json["user"] as? [String: Any])?["id"] as? String == s.user.id)
            let token = try #require(session.accessToken)
            #expect(APIKeyTests.claims(token)["amr"] as? [String] == ["device"])
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/api-keys", json: ["name": "x"], bearer: token).errorCode == "FORBIDDEN")
            #expect(try await client.send(.post, "/api/v1/auth/device/BCDF-GHJK/approve", bearer: token).errorCode == "FORBIDDEN")
            let sessions = try await client.send(.get, "/api/v1/auth/sessions", bearer: token).json["sessions"] as? [[String: Any]]
            #expect(sessions?.contains { $0["device_name"] as? String == "Living room frame" && $0["current"] as? Bool == true } == true)

            h.clock.advance(by: 16)
            #expect(Self.oauthError(try await Self.poll(client, deviceCode)) == "invalid_grant", "one session per device code")

            // The refresh grant in OAuth's format; a refresh keeps the session limited.
            let refreshed = try await Self.form(client, "/oauth/token", "grant_type=refresh_token&refresh_token=\(session.json["refresh_token"] as! String)")
            #expect(refreshed.status == .ok && APIKeyTests.claims(refreshed.accessToken!)["amr"] as? [String] == ["device"])
            let reused = try await Self.form(client, "/oauth/token", "grant_type=refresh_token&refresh_token=nope")
            #expect(reused.status == .badRequest && Self.oauthError(reused) == "invalid_grant")
        }
        let notice = try #require(try h.mail(to: "ada@example.com").last)
        #expect(notice.text.contains("a device signed in with a code (Living room frame, linux)"))
        let audit = try String(contentsOfFile: h.folder + "/audit.jsonl", encoding: .utf8)
        #expect(audit.contains(#""event":"device_approved""#))
    }

    @Test func aDeniedOrExpiredOrForeignCodeIsRefusedInOAuthsWords() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn()
        try await h.test { client async throws in
            let denied = try await Self.start(client, #"{"client_id":"tv"}"#, type: "application/json")
            let deniedCode = denied["device_code"] as! String
            #expect(try await client.send(.post, "/api/v1/auth/device/\(denied["user_code"] as! String)/deny", bearer: s.accessToken).status == .noContent)
            #expect(Self.oauthError(try await Self.poll(client, deniedCode, clientID: "tv")) == "access_denied")

            let other = try await Self.start(client, "")
            let otherCode = other["device_code"] as! String
            #expect(Self.oauthError(try await Self.poll(client, otherCode, clientID: "someone-else")) == "invalid_grant", "no client_id was given")
            #expect(Self.oauthError(try await Self.poll(client, String(otherCode.dropLast()) + "x", clientID: nil)) == "invalid_grant")
            #expect(Self.oauthError(try await Self.poll(client, "garbage", clientID: nil)) == "invalid_grant")
            h.clock.advance(by: 601)
            #expect(Self.oauthError(try await Self.poll(client, otherCode, clientID: nil)) == "expired_token")
            let gone = try await client.send(.get, "/api/v1/auth/device/\(other["user_code"] as! String)", bearer: s.accessToken)
            #expect(gone.status == .notFound)
            // No longer fresh: the session's refresh token is its proof (contract §12).
            let approve = try await client.send(
                .post, "/api/v1/auth/device/\(other["user_code"] as! String)/approve", json: ["refresh_token": s.refreshToken], bearer: s.accessToken)
            #expect(approve.status == .notFound)
            #expect(try await client.send(.get, "/api/v1/auth/device/not-a-code", bearer: s.accessToken).status == .notFound)
            #expect(try await client.send(.get, "/api/v1/auth/device/BCDF-GHJK").status == .unauthorized)
        }
    }

    @Test func everyMalformedRequestGetsAnOAuthError() async throws {
        let h = try await TestHarness.make()
        try await h.test { client async throws in
            let cases: [(String, String, String, HTTPResponse.Status, String)] = [
                ("/oauth/token", "", "application/x-www-form-urlencoded", .badRequest, "invalid_request"),
                ("/oauth/token", "grant_type=password&username=a", "application/x-www-form-urlencoded", .badRequest, "unsupported_grant_type"),
                ("/oauth/token", "grant_type=\(Self.grant)", "application/x-www-form-urlencoded", .badRequest, "invalid_request"),
                ("/oauth/token", "grant_type=refresh_token&grant_type=refresh_token", "application/x-www-form-urlencoded", .badRequest, "invalid_request"),
                ("/oauth/token", "grant_type=%zz", "application/x-www-form-urlencoded", .badRequest, "invalid_request"),
                ("/oauth/token", #"{"grant_type": 3.5}"#, "application/json", .badRequest, "invalid_request"),
                ("/oauth/token", #"{"grant_type":"refresh_token","grant_type":"x"}"#, "application/json", .badRequest, "invalid_request"),
                ("/oauth/token", "[1]", "application/json", .badRequest, "invalid_request"),
                ("/oauth/token", "grant_type=refresh_token", "text/plain", .unsupportedMediaType, "invalid_request"),
                ("/oauth/token", String(repeating: "a", count: 70_000), "application/x-www-form-urlencoded", .contentTooLarge, "invalid_request"),
                ("/oauth/device_authorization", "device_name=%07bell", "application/x-www-form-urlencoded", .badRequest, "invalid_request"),
                ("/oauth/device_authorization", "client_id=" + String(repeating: "c", count: 129), "application/x-www-form-urlencoded", .badRequest, "invalid_request"),
                ("/oauth/device_authorization", "client_id=a%20b", "application/x-www-form-urlencoded", .badRequest, "invalid_request"),
            ]
            for (path, body, type, status, error) in cases {
                let r = try await Self.form(client, path, body, type: type)
                #expect(r.status == status, "\(path) \(body.prefix(60))")
                #expect(Self.oauthError(r) == error, "\(path) \(body.prefix(60))")
            }
        }
    }

    @Test func aParameterAnEndpointDoesNotReadIsIgnoredEvenRepeated() async throws {
        let h = try await TestHarness.make()
        try await h.test { client async throws in
            // `code` is the token endpoint's; sent twice to another endpoint it is not that endpoint's business.
            let started = try await Self.form(client, "/oauth/device_authorization", "code=a&code=b&device_name=TV", type: "application/x-www-form-urlencoded")
            #expect(started.status == .ok)
            let asked = try await Self.form(client, "/oauth/introspect", "code=a&code=b&token=x", type: "application/x-www-form-urlencoded")
            #expect(asked.status == .unauthorized)
            #expect(Self.oauthError(asked) == "invalid_client")
            let json = try await Self.form(client, "/oauth/device_authorization", #"{"code":"a","code":"b"}"#, type: "application/json")
            #expect(json.status == .ok)
            // Nor is the code grant's `code` the refresh grant's: any type, any number of times.
            let refresh = try await Self.form(client, "/oauth/token", #"{"grant_type":"refresh_token","refresh_token":"x","code":[1,{}]}"#, type: "application/json")
            #expect(Self.oauthError(refresh) == "invalid_grant")
            let form = try await Self.form(client, "/oauth/token", "grant_type=refresh_token&code=1&code=2&refresh_token=x", type: "application/x-www-form-urlencoded")
            #expect(Self.oauthError(form) == "invalid_grant")
        }
    }

    @Test func guessingUserCodesAndStartingRequestsAreLimited() async throws {
        let h = try await TestHarness.make(
            config: #"{"mail":{"transport":"outbox"},"device":{"lookups_per_session":{"limit":3,"window":600},"starts_per_ip":{"limit":2,"window":600},"verification_uri":"https://auth.example.com/device"}}"#)
        let s = try await h.signIn()
        try await h.test { client async throws in
            for _ in 0..<3 { #expect(try await client.send(.get, "/api/v1/auth/device/BCDF-GHJK", bearer: s.accessToken).status == .notFound) }
            let limited = try await client.send(.post, "/api/v1/auth/device/BCDF-GHJK/approve", bearer: s.accessToken)
            #expect(limited.status == .tooManyRequests && limited.errorCode == "RATE_LIMIT_EXCEEDED")
            #expect(try await Self.start(client)["verification_uri"] as? String == "https://auth.example.com/device")
            _ = try await Self.start(client)
            let third = try await Self.form(client, "/oauth/device_authorization", "")
            #expect(third.status == .tooManyRequests && Self.oauthError(third) == "slow_down" && third.headers[.retryAfter] != nil)
        }
    }

    @Test func thePageIsServedOnlyOverHTTPSOrToThisMachine() async throws {
        let plain = try await TestHarness.make()
        try await plain.test { client async throws in
            // The router's client is no loopback address, and the issuer is http: refused.
            let page = try await client.execute(uri: "/device", method: .get)
            #expect(page.status == .forbidden && String(buffer: page.body).contains("served over HTTPS only"))
        }
        // The harness's client asks for `localhost`: the issuer's host.
        let https = try await TestHarness.make(config: #"{"issuer":"https://localhost","mail":{"transport":"outbox"}}"#)
        try await https.test { client async throws in
            // Not signed in: to the sign-in page, which comes back with the code.
            let page = try await client.execute(uri: "/device?user_code=BCDF-GHJK", method: .get)
            #expect(page.status == .found && page.headers[.location]?.hasPrefix("/login?return_to=%2Fdevice%3Fuser%5Fcode%3DBCDF") == true)
            #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            let post = try await client.execute(
                uri: "/device/approve", method: .post, headers: [.contentType: "application/x-www-form-urlencoded", .origin: "https://localhost"],
                body: ByteBuffer(string: "csrf=x&user_code=BCDF-GHJK"))
            #expect(post.status == .found && post.headers[.location]?.hasPrefix("/login?") == true, "no browser session: nothing answered")
        }
    }

    @Test func thePaceOfPollsIsKeptInBoundedMemory() {
        let pacing = PollPacing(maxEntries: 100)
        #expect(!pacing.tooSoon("A", now: 0, interval: 5))
        #expect(pacing.tooSoon("A", now: 1, interval: 5), "sooner than the interval")
        #expect(pacing.tooSoon("A", now: 7, interval: 5), "each slow_down adds 5 seconds: 10 after the first, 15 now")
        #expect(!pacing.tooSoon("A", now: 22, interval: 5), "15 seconds after the last poll")
        // A flood of codes never polled again: the table stays at its bound.
        for i in 0..<1_000 { _ = pacing.tooSoon("code\(i)", now: 30 + Double(i) / 1_000, interval: 5) }
        #expect(pacing.count <= 100)
        #expect(pacing.tooSoon("code999", now: 31.0, interval: 5), "the newest are kept")
    }
}
