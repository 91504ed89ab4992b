@testable import OIDCProvider
import AuthKernel
import AuthKernelTesting
import AuthStorage
import EmailProvider
import Foundation
import HTTPTypes
import NIOCore
import Synchronization
import Testing

/// The web flow on authd's pages (contract §16): `/login/oidc/NAME` to the identity provider with
/// PKCE, `state` and `nonce`, and back at `/login/oidc/NAME/callback`, against a stand-in upstream
/// (and GitHub) on the injected clock.
struct OIDCWebFlowTests {
    static let secret = "s3cret:&=+"

    static func config() throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-secret-\(UUID().uuidString)").path
        try (secret + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let gh = UpstreamStandIn.github
        return #"""
            {"issuer":"https://localhost","mail":{"transport":"outbox"},"providers":["email","oidc"],"email":{"resend_interval":0},
             "oidc":{"providers":{
               "web":{"issuer":"https://idp.example.test","client_id":"authd","client_secret_file":"\#(file)","label":"Example ID"},
               "trusted":{"issuer":"https://idp.example.test","client_id":"authd","client_secret_file":"\#(file)","trust_email":true},
               "native":{"issuer":"https://idp.example.test","client_id":"authd","web":false},
               "ms":{"kind":"microsoft","issuer":"https://idp.example.test","client_id":"authd","client_secret_file":"\#(file)"},
               "gh":{"kind":"github","client_id":"gh-client","client_secret_file":"\#(file)","trust_email":true,
                     "authorize_url":"\#(gh)/login/oauth/authorize","token_url":"\#(gh)/login/oauth/access_token","api_url":"\#(gh)/api"}}}}
            """#
    }

    func harness(_ upstream: UpstreamStandIn, clock: ManualClock) async throws -> TestHarness {
        try await TestHarness.make(providers: [EmailProvider.self, OIDCProvider.self], config: try Self.config(), clock: clock, http: upstream)
    }

    /// The query of the identity provider's URL a start sent the browser to.
    static func query(_ url: String) -> [String: String] {
        let items = URLComponents(string: url)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
    }

    /// Starts `name`'s flow: the authorize request's fields.
    func start(_ browser: HarnessBrowser, _ name: String, link: Bool = false) async throws -> [String: String] {
        var path = "/login/oidc/\(name)"
        if link {
            // As the person does: the link on their account page, with its CSRF token.
            let account = try await browser.open("/account").text
            let start = try #require(account.range(of: "href=\"/login/oidc/\(name)?link=1&amp;csrf="))
            let href = account[account.index(start.lowerBound, offsetBy: 6)...].prefix { $0 != "\"" }
            path = href.replacingOccurrences(of: "&amp;", with: "&")
        }
        let page = try await browser.open(path)
        #expect(page.status == .found, "\(page.status): \(page.text)")
        return Self.query(page.path)
    }

    func callback(_ name: String, _ fields: [String: String?]) -> String {
        var c = URLComponents()
        c.queryItems = fields.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }
        return "/login/oidc/\(name)/callback?" + (c.percentEncodedQuery ?? "")
    }

    /// A browser signed in on the pages with a mailed code.
    func signedInBrowser(_ client: HarnessClient, _ h: TestHarness, _ email: String) async throws -> HarnessBrowser {
        let browser = HarnessBrowser(client, origin: h.kernel.issuer)
        _ = try await browser.open("/login?return_to=/account")
        _ = try await browser.submit("/login/email/send", ["email": email])
        let code = try #require(try h.mail(to: email).last?.code)
        let page = try await browser.submit("/login/email/verify", ["code": code])
        #expect(page.path == "/account")
        return browser
    }

    @Test func aBrowserSignsInThroughTheCodeFlowWithPKCEAndOnToWhereItWasGoing() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            let login = try await browser.open("/login?return_to=/account%3Fwelcome")
            #expect(login.text.contains(#"href="/login/oidc/web">Continue with Example ID<"#) && login.text.contains("Continue with GitHub"))
            #expect(!login.text.contains("/login/oidc/native"), "an upstream marked web: false is not offered")

            clock.advance(by: 540)  // nine minutes on /login, nine more at the upstream: the sign-in lives on
            let asked = try await start(browser, "web")
            clock.advance(by: 540)
            #expect(asked["response_type"] == "code" && asked["client_id"] == "authd" && asked["scope"] == "openid email profile")
            #expect(asked["redirect_uri"] == "https://localhost/login/oidc/web/callback" && asked["code_challenge_method"] == "S256")
            let state = try #require(asked["state"]), nonce = try #require(asked["nonce"]), challenge = try #require(asked["code_challenge"])
            #expect(state.count >= 32 && nonce.count >= 32)

            upstream.state.withLock { $0.codes["c-1"] = try? upstream.token(now: clock.now(), ["sub": "w-1", "nonce": nonce]) }
            let before = try #require(browser.cookie("__Host-authd-signin"))
            let url = callback("web", ["code": "c-1", "state": state, "iss": UpstreamStandIn.issuer, "return_to": "/account?elsewhere"])
            let done = try await browser.open(url)
            #expect(done.path == "/account?welcome" && done.status == .ok, "on to where the sign-in was going (the way back cannot change it)")
            #expect(browser.cookie("__Host-authd") != nil && browser.cookie("__Host-authd-signin") == nil)

            // The token request: the code, the verifier behind the challenge, the client by HTTP Basic.
            let request = try #require(upstream.state.withLock { $0.tokenRequests.first })
            #expect(request.fields["grant_type"] == "authorization_code" && request.fields["code"] == "c-1")
            #expect(request.fields["redirect_uri"] == "https://localhost/login/oidc/web/callback")
            let verifier = try #require(request.fields["code_verifier"])
            #expect(Base64URL.encode(SHA256.hash(verifier)) == challenge)
            let basic = "authd:" + Self.secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(request.authorization == "Basic " + Data(basic.utf8).base64EncodedString())

            let user = try #require(try await h.kernel.users.user(identity: Identity(provider: "web", subject: "w-1")))
            let session = try #require(try await h.kernel.sessions.sessions(of: user.id).first)
            #expect(session.isBrowser && session.amr == ["oidc"] && user.email == nil)

            // The same answer again, with the cookie it was bound to and a code the upstream would
            // take again: the state is spent, nothing reaches the upstream.
            upstream.state.withLock { $0.codes["c-1"] = try? upstream.token(now: clock.now(), ["sub": "w-1", "nonce": nonce]) }
            let replay = try await client.execute(uri: url, method: .get, headers: [.cookie: "__Host-authd-signin=\(before)"])
            #expect(replay.status == .badRequest && String(buffer: replay.body).contains("Start again"))
            #expect(upstream.state.withLock { $0.tokenRequests.count } == 1)
        }
    }

    @Test func anAnswerNotBoundToThisBrowsersSignInIsRefusedBeforeTheUpstreamIsAsked() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        upstream.state.withLock { $0.issParameter = true }
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            func attempt(_ fields: (_ state: String, _ nonce: String) -> [String: String?], code: String? = nil, claims: [String: Any] = [:], wait: Int = 0)
                async throws -> HarnessBrowser.Page
            {
                let asked = try await start(browser, "web")
                let (state, nonce) = (asked["state"]!, asked["nonce"]!)
                if let code {
                    upstream.state.withLock { $0.codes[code] = try? upstream.token(now: clock.now(), ["sub": "w-2", "nonce": nonce].merging(claims) { $1 }) }
                }
                clock.advance(by: TimeInterval(wait))
                return try await browser.open(callback("web", fields(state, nonce)))
            }
            let iss = UpstreamStandIn.issuer
            var page = try await attempt({ _, _ in ["code": "c", "state": "forged", "iss": iss] }, code: "c")
            #expect(page.status == .badRequest && page.text.contains("not started in this browser"))
            page = try await attempt({ s, _ in ["code": "c", "state": s, "iss": iss] }, code: "c", wait: 601)
            #expect(page.status == .badRequest, "ten minutes at most")
            page = try await attempt({ s, _ in ["code": "c", "state": s, "iss": "https://evil.example"] }, code: "c")
            #expect(page.status == .unauthorized && page.text.contains("did not come from Example ID"), "RFC 9207: another issuer's answer")
            page = try await attempt({ s, _ in ["code": "c", "state": s] }, code: "c")
            #expect(page.status == .unauthorized, "an upstream that names itself in answers must name itself in this one")
            #expect(upstream.state.withLock { $0.tokenRequests.isEmpty }, "none of these reached the upstream")

            page = try await attempt({ s, _ in ["error": "access_denied", "state": s, "iss": iss] })
            #expect(page.status == .unauthorized && page.text.contains("cancelled at Example ID"))
            page = try await attempt({ s, _ in ["code": "unknown", "state": s, "iss": iss] })
            #expect(page.status == .unauthorized && page.text.contains("did not work"), "the upstream refuses the code")
            page = try await attempt({ s, _ in ["code": "c2", "state": s, "iss": iss] }, code: "c2", claims: ["nonce": "another"])
            #expect(page.status == .unauthorized, "the ID token carries another nonce")
            page = try await attempt({ s, _ in ["code": "c3", "state": s, "iss": iss] }, code: "c3", claims: ["aud": "com.example.app"])
            #expect(page.status == .unauthorized, "a native app's audience is not the web flow's")
            #expect(browser.cookie("__Host-authd") == nil, "nobody signed in")

            // Another browser brings a real answer: it has not this sign-in's cookie.
            let asked = try await start(browser, "web")
            upstream.state.withLock { $0.codes["c4"] = try? upstream.token(now: clock.now(), ["sub": "w-2", "nonce": asked["nonce"]!]) }
            let other = HarnessBrowser(client, origin: h.kernel.issuer)
            #expect(try await other.open(callback("web", ["code": "c4", "state": asked["state"]!, "iss": iss])).status == .badRequest)
            let ok = try await browser.open(callback("web", ["code": "c4", "state": asked["state"]!, "iss": iss]))
            #expect(ok.path == "/account" && browser.cookie("__Host-authd") != nil, "the browser that started it signs in")
            #expect(try h.audit(event: "sign_in_failed").count >= 5)
        }
    }

    @Test func gitHubSignsInByItsNumericIDAndItsPrimaryVerifiedEmail() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let ada = try await h.signIn("ada", email: "ada@example.com")
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            _ = try await browser.open("/login")
            let page = try await browser.open("/login/oidc/gh")
            #expect(page.path.hasPrefix(UpstreamStandIn.github + "/login/oauth/authorize?"))
            let asked = Self.query(page.path)
            #expect(asked["client_id"] == "gh-client" && asked["scope"] == "read:user user:email" && asked["nonce"] == nil)
            upstream.state.withLock { $0.codes["g-1"] = "token-1" }
            let done = try await browser.open(callback("gh", ["code": "g-1", "state": asked["state"]!]))
            #expect(done.path == "/account" && done.text.contains("ada@example.com"), "trusted: the verified primary address joins Ada's account")
            let request = try #require(upstream.state.withLock { $0.tokenRequests.first })
            #expect(request.authorization == nil && request.fields["client_id"] == "gh-client" && request.fields["client_secret"] == Self.secret)
            let user = try #require(try await h.kernel.users.user(identity: Identity(provider: "gh", subject: "4242")))
            #expect(user.id.lowercased == ada.user.id.lowercased)

            // An unverified primary address joins nothing: a new account, without it.
            upstream.state.withLock {
                $0.githubUser = #"{"id":77,"login":"bea"}"#
                $0.githubEmails = #"[{"email":"ada@example.com","primary":true,"verified":false}]"#
                $0.codes["g-2"] = "token-2"
            }
            let second = HarnessBrowser(client, origin: h.kernel.issuer)
            let asked2 = Self.query(try await second.open("/login/oidc/gh").path)
            #expect(try await second.open(callback("gh", ["code": "g-2", "state": asked2["state"]!])).path == "/account")
            let bea = try #require(try await h.kernel.users.user(identity: Identity(provider: "gh", subject: "77")))
            #expect(bea.id.lowercased != ada.user.id.lowercased && bea.email == nil && bea.displayName == "bea")

            // A code GitHub refuses (it answers 200 with an error) signs nobody in.
            let third = HarnessBrowser(client, origin: h.kernel.issuer)
            let asked3 = Self.query(try await third.open("/login/oidc/gh").path)
            let refused = try await third.open(callback("gh", ["code": "nope", "state": asked3["state"]!]))
            #expect(refused.status == .unauthorized && third.cookie("__Host-authd") == nil)
            // GitHub has no ID tokens: the native exchange does not know it.
            #expect(try await client.send(.post, "/api/v1/auth/oidc/gh", json: ["id_token": "x"]).status == .notFound)
        }
    }

    @Test func aSignedInBrowserLinksFromAFreshSignInAndAnIdentityLinkedElsewhereIsRefused() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let bea = try await signedInBrowser(client, h, "bea@example.com")
            let account = try await bea.open("/account")
            #expect(account.text.contains(#"href="/login/oidc/web?link=1&amp;csrf="#))
            let asked = try await start(bea, "web", link: true)
            upstream.state.withLock { $0.codes["l-1"] = try? upstream.token(now: clock.now(), ["sub": "shared", "nonce": asked["nonce"]!]) }
            let linked = try await bea.open(callback("web", ["code": "l-1", "state": asked["state"]!, "iss": UpstreamStandIn.issuer]))
            #expect(linked.path == "/account" && linked.text.contains("Linked: you can sign in with it."))
            let beaUser = try #require(try await h.kernel.users.user(email: "bea@example.com"))
            #expect(beaUser.identities.contains(Identity(provider: "web", subject: "shared")))

            // The same identity, linked from Carol's sign-in: it is Bea's already.
            let carol = try await signedInBrowser(client, h, "carol@example.com")
            let asked2 = try await start(carol, "web", link: true)
            upstream.state.withLock { $0.codes["l-2"] = try? upstream.token(now: clock.now(), ["sub": "shared", "nonce": asked2["nonce"]!]) }
            let taken = try await carol.open(callback("web", ["code": "l-2", "state": asked2["state"]!, "iss": UpstreamStandIn.issuer]))
            #expect(taken.status == .conflict && taken.text.contains("already belongs to another account") && taken.text.contains("Back to your account"))

            // A link goes to the sign-in that asked for it: another sign-in in the same browser
            // (Bea's ended, Dan's begun) brings the answer back to nothing.
            let asked3 = try await start(bea, "trusted", link: true)
            let flowCookie = try #require(bea.cookie("__Host-authd-signin"))
            upstream.state.withLock { $0.codes["l-3"] = try? upstream.token(now: clock.now(), ["sub": "bea-2", "nonce": asked3["nonce"]!]) }
            let dan = try await signedInBrowser(client, h, "dan@example.com")
            let danCookie = try #require(dan.cookie("__Host-authd"))
            let switched = try await client.execute(
                uri: callback("trusted", ["code": "l-3", "state": asked3["state"]!, "iss": UpstreamStandIn.issuer]), method: .get,
                headers: [.cookie: "__Host-authd-signin=\(flowCookie); __Host-authd=\(danCookie)"])
            #expect(switched.status == .unauthorized && String(buffer: switched.body).contains("Your sign-in changed"))
            let danUser = try #require(try await h.kernel.users.user(email: "dan@example.com"))
            #expect(!danUser.identities.contains { $0.provider == "trusted" })

            // Another site's link (no token, or not this sign-in's) acts for nobody.
            let forced = try await carol.open("/login/oidc/web?link=1")
            #expect(forced.status == .unauthorized && carol.cookie("__Host-authd") != nil)
            let foreign = try await carol.open("/login/oidc/web?link=1&csrf=forged")
            #expect(foreign.status == .forbidden)

            // A stale sign-in links nothing, and a browser signed in nowhere has nothing to link to.
            clock.advance(by: 601)
            let carolPage = try await carol.open("/account").text
            let href = try #require(carolPage.firstMatch(of: /href="(\/login\/oidc\/web\?link=1&amp;csrf=[^"]+)"/)?.1)
            let stale = try await carol.open(String(href).replacingOccurrences(of: "&amp;", with: "&"))
            #expect(stale.status == .forbidden && stale.text.contains("Back to your account"))
            let nobody = HarnessBrowser(client, origin: h.kernel.issuer)
            #expect(try await nobody.open("/login/oidc/web?link=1").status == .unauthorized)
            // Unknown names: 404.
            #expect(try await nobody.open("/login/oidc/nobody").status == .notFound)
            #expect(try await nobody.open("/login/oidc/native").status == .notFound)
        }
    }

    @Test func aMisconfiguredUpstreamStopsStartUpWithItsName() async throws {
        let cases: [(entry: String, says: String)] = [
            (#""email":{"issuer":"https://idp.example.test","client_id":"authd"}"#, "is a provider's id"),
            (#""passkey":{"issuer":"https://idp.example.test","client_id":"authd"}"#, "is a provider's id"),
            (#""gh":{"kind":"github"}"#, "client_id is required"),
            (#""x":{"issuer":"https://idp.example.test","client_id":"authd","api_url":"https://api.example.test"}"#, "api_url is GitHub's"),
            (#""x":{"issuer":"https://idp.example.test","client_id":"authd","token_url":"http://idp.example.test/token"}"#, "token_url must be an https:// URL"),
            (#""x":{"issuer":"https://idp.example.test","client_id":"authd","label":""}"#, "label must be 1 to 40 characters"),
        ]
        for (entry, says) in cases {
            let config = #"{"mail":{"transport":"outbox"},"providers":["email","oidc"],"oidc":{"providers":{\#(entry)}}}"#
            await #expect(throws: ConfigError.self, "\(entry)") {
                _ = try await TestHarness.make(providers: [EmailProvider.self, OIDCProvider.self], config: config, http: UpstreamStandIn())
            }
            do {
                _ = try await TestHarness.make(providers: [EmailProvider.self, OIDCProvider.self], config: config, http: UpstreamStandIn())
            } catch {
                #expect("\(error)".contains(says), "\(entry): \(error)")
            }
        }
    }

    @Test func microsoftsAnswerIsHeldToItsTokensIssuer() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            for (code, iss, signedIn) in [("m-1", "https://login.example.test/other-tenant/v2.0", false), ("m-2", UpstreamStandIn.issuer, true)] {
                let asked = try await start(browser, "ms")
                let claims: [String: Any] = ["tid": "t-1", "oid": "o-1", "nonce": asked["nonce"]!]
                upstream.state.withLock { $0.codes[code] = try? upstream.token(now: clock.now(), claims) }
                let page = try await browser.open(callback("ms", ["code": code, "state": asked["state"]!, "iss": iss]))
                #expect((page.path == "/account") == signedIn && (browser.cookie("__Host-authd") != nil) == signedIn, "\(iss)")
            }
            #expect(try await h.kernel.users.user(identity: Identity(provider: "ms", subject: "t-1:o-1")) != nil)
        }
    }

    @Test func aDiscoveryDocumentCannotSendTheCodeToThisMachine() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        upstream.state.withLock { $0.loopbackTokenEndpoint = true }
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let browser = HarnessBrowser(client, origin: h.kernel.issuer)
            let page = try await browser.open("/login/oidc/web")
            #expect(page.status == .serviceUnavailable && page.text.contains("not possible right now"))
        }
    }
}
