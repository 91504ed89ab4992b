@testable import PasskeyProvider
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import PasswordProvider
import TOTPProvider
import Testing

/// Passkey ceremonies over HTTP with a software authenticator (contract §10): registration from
/// a fresh session, sign-in with the passkey alone, the passkey as a second factor, and forgeries.
struct PasskeyProviderTests {
    static let config = #"{"mail":{"transport":"outbox"},"providers":["password","totp","passkey"],"passkeys":{"rp_id":"example.org","rp_name":"Example","origins":["https://example.org"],"apple_app_ids":["ABCDE12345.org.example.app"]}}"#
    static let password = "correct horse battery"

    func harness(_ config: String = Self.config) async throws -> TestHarness {
        try await TestHarness.make(providers: [PasswordProvider.self, TOTPProvider.self, PasskeyProvider.self], config: config)
    }

    func registered(_ client: HarnessClient, _ h: TestHarness, email: String = "ada@example.com") async throws -> SessionResponse {
        #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": email, "password": Self.password]).status == .accepted)
        let code = try h.mail(to: email).last { $0.code != nil }?.code ?? ""
        return try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": email, "code": code, "password": Self.password])
            .decode(SessionResponse.self)
    }

    /// Registers `authenticator` for the session; returns the answer.
    func addPasskey(_ client: HarnessClient, _ s: SessionResponse, _ authenticator: SoftAuthenticator, name: String? = "iPhone", format: String = "none") async throws -> HarnessResponse {
        let options = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken)
        #expect(options.status == .ok)
        var body: [String: Any] = ["credential": try authenticator.register(options.json, format: format)]
        body["name"] = name
        return try await client.send(.post, "/api/v1/auth/passkeys/register", json: body, bearer: s.accessToken)
    }

    func loginOptions(_ client: HarnessClient) async throws -> [String: Any] {
        let r = try await client.send(.post, "/api/v1/auth/passkeys/login/options")
        #expect(r.status == .ok)
        return r.json
    }

    static func amr(_ token: String) throws -> [String] {
        let claims = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(token.split(separator: ".")[1])!)) as? [String: Any]
        return claims?["amr"] as? [String] ?? []
    }

    @Test func registerThenSignInWithThePasskeyAlone() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let options = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken).json
            #expect((options["rp"] as? [String: Any])?["id"] as? String == "example.org")
            #expect((options["user"] as? [String: Any])?["name"] as? String == "ada@example.com")
            #expect((options["authenticatorSelection"] as? [String: Any])?["residentKey"] as? String == "required")
            #expect((options["authenticatorSelection"] as? [String: Any])?["userVerification"] as? String == "required")
            #expect(options["attestation"] as? String == "none")
            #expect((options["pubKeyCredParams"] as? [[String: Any]])?.compactMap { $0["alg"] as? Int } == [-7, -8])
            #expect(Base64URL.decode(options["challenge"] as? String ?? "")?.count == 38)

            let phone = SoftAuthenticator()
            let added = try await addPasskey(client, s, phone)
            #expect(added.status == .created && added.json["id"] as? String == phone.id && added.json["name"] as? String == "iPhone")
            let listed = try await client.send(.get, "/api/v1/auth/passkeys", bearer: s.accessToken)
            #expect((listed.json["passkeys"] as? [[String: Any]])?.map { $0["id"] as? String } == [phone.id])
            let mfa = try await client.send(.get, "/api/v1/auth/mfa", bearer: s.accessToken)
            #expect((mfa.json["factors"] as? [[String: Any]])?.map { $0["type"] as? String } == ["passkey"])
            // The same passkey again is refused; the next registration's options exclude it.
            let again = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken).json
            #expect((again["excludeCredentials"] as? [[String: Any]])?.map { $0["id"] as? String } == [phone.id])
            let twice = try await client.send(.post, "/api/v1/auth/passkeys/register", json: ["credential": try phone.register(again)], bearer: s.accessToken)
            #expect(twice.errorCode == "IDENTITY_IN_USE")

            let assertion = try phone.assert(try await loginOptions(client))
            let signedIn = try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": assertion, "device_name": "iPhone"])
            #expect(signedIn.status == .ok, "\(signedIn.json)")
            let session = try signedIn.decode(SessionResponse.self)
            #expect(try Self.amr(session.accessToken) == ["passkey", "mfa"])
            #expect(session.user.authProviders.contains("passkey"))
            // The same assertion again: its challenge is used.
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": assertion]).errorCode == "INVALID_CREDENTIALS")
            let used = try await client.send(.get, "/api/v1/auth/passkeys", bearer: s.accessToken).json["passkeys"] as? [[String: Any]]
            #expect(used?.first?["last_used_at"] as? String != nil)
        }
    }

    @Test func forgedAssertionsAreRefused() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let phone = SoftAuthenticator(signCount: 10)
            #expect(try await addPasskey(client, s, phone).status == .created)
            func attempt(_ credential: [String: Any]) async throws -> String? {
                try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": credential]).errorCode
            }
            #expect(try await attempt(try phone.assert(try await loginOptions(client), origin: "https://evil.example")) == "INVALID_CREDENTIALS")
            #expect(try await attempt(try phone.assert(try await loginOptions(client), flags: [.up])) == "INVALID_CREDENTIALS", "UV missing")
            #expect(try await attempt(try phone.assert(try await loginOptions(client), flags: [.uv])) == "INVALID_CREDENTIALS", "UP missing")
            var wrongRP = try await loginOptions(client)
            wrongRP["rpId"] = "evil.example"
            #expect(try await attempt(try phone.assert(wrongRP)) == "INVALID_CREDENTIALS")
            // A challenge the server never issued.
            #expect(try await attempt(try phone.assert(["challenge": Base64URL.encode(SecureRandom.bytes(38)), "rpId": "example.org"])) == "INVALID_CREDENTIALS")
            // A registration challenge is not a sign-in challenge.
            let registration = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken).json
            #expect(try await attempt(try phone.assert(["challenge": registration["challenge"] as Any, "rpId": "example.org"])) == "INVALID_CREDENTIALS")
            // Another key claiming this credential id.
            let impostor = SoftAuthenticator(signCount: 100)
            var stolen = try impostor.assert(try await loginOptions(client))
            stolen["id"] = phone.id
            stolen["rawId"] = phone.id
            #expect(try await attempt(stolen) == "INVALID_CREDENTIALS")
            // A discoverable sign-in without its user handle, or with another account's.
            var anonymous = try phone.assert(try await loginOptions(client))
            var response = anonymous["response"] as? [String: Any] ?? [:]
            response["userHandle"] = nil
            anonymous["response"] = response
            #expect(try await attempt(anonymous) == "INVALID_CREDENTIALS")
            phone.signCount -= 1
            let handle = phone.userHandle
            phone.userHandle = Base64URL.encode([UInt8](repeating: 7, count: 16))
            #expect(try await attempt(try phone.assert(try await loginOptions(client), step: 0)) == "INVALID_CREDENTIALS")
            phone.userHandle = handle
            // Backup eligibility cannot change after registration.
            #expect(try await attempt(try phone.assert(try await loginOptions(client), flags: [.up, .uv])) == "INVALID_CREDENTIALS")
            // A good assertion moves the counter; one that goes back (a clone) is refused.
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": try phone.assert(try await loginOptions(client), step: 5)]).status == .ok)
            phone.signCount -= 3
            #expect(try await attempt(try phone.assert(try await loginOptions(client), step: 0)) == "INVALID_CREDENTIALS")
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": "nope"]).errorCode == "INVALID_REQUEST")
        }
    }

    @Test func registrationForgeriesAndItsRules() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/register/options").status == .unauthorized)
            let key = SoftAuthenticator()
            let options = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken).json
            let noUV = try await client.send(.post, "/api/v1/auth/passkeys/register", json: ["credential": try key.register(options, flags: [.up])], bearer: s.accessToken)
            #expect(noUV.errorCode == "INVALID_REQUEST")
            // That challenge is dead now; and one issued to another session does not serve this one.
            let other = try await client.send(.post, "/api/v1/auth/password/login", json: ["email": "ada@example.com", "password": Self.password]).decode(SessionResponse.self)
            let theirs = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: other.accessToken).json
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/register", json: ["credential": try key.register(theirs)], bearer: s.accessToken).errorCode == "INVALID_REQUEST")
            // Packed self attestation is accepted; names are checked.
            let fresh = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken).json
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/register", json: ["credential": try key.register(fresh, format: "packed"), "name": "bad\u{7}name"], bearer: s.accessToken).errorCode == "INVALID_REQUEST")
            let packed = try await addPasskey(client, s, SoftAuthenticator(), name: nil, format: "packed")
            #expect(packed.status == .created && packed.json["name"] as? String == "Passkey")
            let unknownFormat = try await addPasskey(client, s, SoftAuthenticator(), format: "fido-u2f")
            #expect(unknownFormat.errorCode == "INVALID_REQUEST")
            // Removal needs a fresh session; a removed passkey signs nobody in.
            let listed = try await client.send(.get, "/api/v1/auth/passkeys", bearer: s.accessToken).json["passkeys"] as? [[String: Any]]
            let id = try #require(listed?.first?["id"] as? String)
            #expect(try await client.send(.delete, "/api/v1/auth/passkeys/nothing", bearer: s.accessToken).errorCode == "NOT_FOUND")
            h.clock.advance(by: 601)
            #expect(try await client.send(.delete, "/api/v1/auth/passkeys/\(id)", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
        }
    }

    @Test func aPasskeyIsTheSecondFactorAfterAPasswordAndCanBeRemoved() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let phone = SoftAuthenticator()
            #expect(try await addPasskey(client, s, phone).status == .created)
            let login = try await client.send(.post, "/api/v1/auth/password/login", json: ["email": "ada@example.com", "password": Self.password])
            #expect(login.status == .accepted && login.json["factors"] as? [String] == ["passkey"])
            let options = try #require(login.json["passkey_options"] as? [String: Any])
            #expect((options["allowCredentials"] as? [[String: Any]])?.map { $0["id"] as? String } == [phone.id])
            #expect(options["userVerification"] as? String == "required" && options["rpId"] as? String == "example.org")
            let challenge = try #require(login.json["challenge"] as? String)
            // A sign-in challenge of the passkey endpoint does not answer this one.
            let foreign = try phone.assert(try await loginOptions(client))
            #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "credential": foreign]).errorCode == "INVALID_CODE")
            let session = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "credential": try phone.assert(options)])
            #expect(session.status == .ok, "\(session.json)")
            #expect(try Self.amr(try #require(session.accessToken)) == ["password", "passkey", "mfa"])

            // Removed: the password alone signs in again.
            #expect(try await client.send(.delete, "/api/v1/auth/passkeys/\(phone.id)", bearer: s.accessToken).status == .noContent)
            #expect(try await client.send(.post, "/api/v1/auth/password/login", json: ["email": "ada@example.com", "password": Self.password]).status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": try phone.assert(try await loginOptions(client))]).errorCode == "INVALID_CREDENTIALS")
        }
    }

    @Test func aResetKeepsPasskeysAndItsMailListsThem() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let phone = SoftAuthenticator()
            #expect(try await addPasskey(client, s, phone, name: "Ada's iPhone").status == .created)
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": "ada@example.com"]).status == .ok)
            var code: String?
            for _ in 0..<6000 where code == nil {
                code = try h.mail().last { $0.subject.contains("reset") }?.code
                if code == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let reset = try await client.send(
                .post, "/api/v1/auth/password/reset/email/verify", json: ["email": "ada@example.com", "code": try #require(code), "new_password": "another good secret"])
            #expect(reset.status == .ok)
            var notice: String?
            for _ in 0..<6000 where notice == nil {
                notice = try h.mail().last { $0.subject.contains("password was changed") }?.text
                if notice == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(notice?.contains("These passkeys still sign in to the account: \"Ada's iPhone\"") == true, "\(notice ?? "no mail")")
            #expect(try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": try phone.assert(try await loginOptions(client))]).status == .ok)
        }
    }

    /// Contract §12: with `rp_id` `localhost`, a passkey can be tried on a laptop over plain http.
    @Test func withRPIDLocalhostAnyHTTPLocalhostPortIsAnOrigin() async throws {
        let local = #"{"issuer":"http://localhost:8080","mail":{"transport":"outbox"},"providers":["password","totp","passkey"],"passkeys":{"rp_id":"localhost"}}"#
        let h = try await harness(local)
        #expect(h.kernel.configurationProblems.all.isEmpty)
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let laptop = SoftAuthenticator()
            let options = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken)
            let created = try await client.send(
                .post, "/api/v1/auth/passkeys/register", json: ["credential": try laptop.register(options.json, origin: "http://localhost:8080")], bearer: s.accessToken)
            #expect(created.status == .created, "\(created.json)")
            for (origin, verdict) in [
                ("http://localhost:5173", HTTPResponse.Status.ok), ("http://localhost", .ok), ("http://localhost.evil.example", .unauthorized),
                ("http://127.0.0.1:8080", .unauthorized), ("http://localhost:8080/x", .unauthorized), ("http://localhost:", .unauthorized),
            ] {
                let signIn = try await client.send(.post, "/api/v1/auth/passkeys/login", json: ["credential": try laptop.assert(try await loginOptions(client), origin: origin)])
                #expect(signIn.status == verdict, "\(origin)")
            }
        }
        // Elsewhere http://localhost is no origin of the passkeys', and the setting says so.
        #expect(PasskeySettings.isLocalhost("http://localhost:3000") && !PasskeySettings.isLocalhost("https://localhost:3000"))
        let strict = try await harness()
        try await strict.test { client async throws in
            let s = try await registered(client, strict)
            let options = try await client.send(.post, "/api/v1/auth/passkeys/register/options", bearer: s.accessToken)
            let refused = try await client.send(
                .post, "/api/v1/auth/passkeys/register", json: ["credential": try SoftAuthenticator().register(options.json, origin: "http://localhost:8080")],
                bearer: s.accessToken)
            #expect(refused.status == .badRequest)
        }
    }

    /// `authd check` refuses an `rp_id` that is not the issuer's host or a domain it is under.
    @Test func anRPIDOutsideTheIssuersDomainIsAConfigurationProblem() async throws {
        func problems(issuer: String, rpID: String) async throws -> [String] {
            let h = try await harness(#"{"issuer":"\#(issuer)","mail":{"transport":"outbox"},"providers":["passkey"],"passkeys":{"rp_id":"\#(rpID)"}}"#)
            try await h.test { _ in }  // closes the store
            return h.kernel.configurationProblems.all
        }
        #expect(try await problems(issuer: "https://auth.example.org", rpID: "example.org").isEmpty)
        #expect(try await problems(issuer: "https://example.org", rpID: "example.org").isEmpty)
        #expect(try await problems(issuer: "https://auth.example.org", rpID: "other.org").first?.contains("passkeys.rp_id \"other.org\"") == true)
        #expect(try await problems(issuer: "https://auth.example.org", rpID: "org").count == 1, "a top-level domain is not registrable")
        #expect(try await problems(issuer: "https://notexample.org", rpID: "example.org").count == 1)
    }

    @Test func appleAppSiteAssociationAndConfiguration() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let r = try await client.send(.get, "/.well-known/apple-app-site-association")
            #expect(r.status == .ok && (r.json["webcredentials"] as? [String: Any])?["apps"] as? [String] == ["ABCDE12345.org.example.app"])
        }
        for (bad, message) in [
            (#"{"providers":["passkey"]}"#, "passkeys.rp_id is required"), (#"{"providers":["passkey"],"passkeys":{"rp_id":"https://example.org"}}"#, "lower-case domain"),
            (#"{"providers":["passkey"],"passkeys":{"rp_id":"example.org","origins":["http://example.org"]}}"#, "not an https:// origin"),
            (#"{"providers":["passkey"],"passkeys":{"rp_id":"example.org","apple_app_ids":["org.example.app"]}}"#, "TEAMID.bundle.id"),
            (#"{"providers":["passkey"],"passkey":{"rp_id":"example.org"}}"#, "unknown configuration key passkey"),
        ] {
            do {
                _ = try await harness(bad)
                Issue.record("accepted \(bad)")
            } catch let error as ConfigError {
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
    }
}
