@testable import OIDCProvider
import AuthKernel
import AuthKernelTesting
import AuthStorage
import EmailProvider
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// Sign-in with another OpenID Provider's ID token (contract §16), against a stand-in upstream on
/// the injected clock.
struct OIDCSignInTests {
    static func config(_ extra: String = "") -> String {
        #"""
        {"mail":{"transport":"outbox"},"providers":["email","oidc"],"email":{"resend_interval":0},
         "oidc":{"providers":{
           "idp":{"issuer":"https://idp.example.test","client_id":"authd","audiences":["com.example.app"]},
           "trusted":{"issuer":"https://idp.example.test","client_id":"authd","trust_email":true},
           "hashed":{"issuer":"https://idp.example.test","client_id":"authd","nonce_hash":"sha256"},
           "ms":{"issuer":"https://idp.example.test","client_id":"authd","kind":"microsoft","require_nonce":false}\#(extra)}}}
        """#
    }

    func harness(_ upstream: UpstreamStandIn, clock: ManualClock = ManualClock(), config: String = Self.config()) async throws -> TestHarness {
        try await TestHarness.make(providers: [EmailProvider.self, OIDCProvider.self], config: config, clock: clock, http: upstream)
    }

    func oidc(_ client: HarnessClient, via name: String = "idp", _ token: String, nonce: String? = "n-1", bearer: String? = nil) async throws -> HarnessResponse {
        var body: [String: Any] = ["id_token": token, "device_name": "Ada's phone"]
        if let nonce { body["nonce"] = nonce }
        return try await client.send(.post, "/api/v1/auth/oidc/\(name)", json: body, bearer: bearer)
    }

    static func amr(_ response: HarnessResponse) -> [String]? {
        guard let token = response.accessToken, let part = token.split(separator: ".").dropFirst().first, let bytes = Base64URL.decode(String(part)),
            let claims = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return nil }
        return claims["amr"] as? [String]
    }

    @Test func everyAcceptedAlgorithmSignsInWithItsOwnKeyType() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            for (i, alg) in ["RS256", "PS256", "ES256", "EdDSA", "Ed25519"].enumerated() {
                let token = try upstream.token(alg: alg, now: clock.now(), ["sub": "u-\(i)", "nonce": "n-1"])
                let answer = try await oidc(client, token)
                #expect(answer.status == .ok, "\(alg): \(answer.json)")
                #expect(Self.amr(answer) == ["oidc"])
            }
            // The app's own client id is an accepted audience too (native SDKs get tokens for it).
            let native = try upstream.token(now: clock.now(), ["sub": "u-9", "aud": ["com.example.app"], "nonce": "n-1"])
            #expect(try await oidc(client, native).status == .ok)
            // Four providers here share the stand-in: each fetched its document once, at start-up.
            #expect(upstream.state.withLock { $0.discoveryFetches } == 4, "discovery cached")
        }
    }

    @Test func forgedExpiredMisdirectedOrReplayedTokensAreRefused() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let now = clock.now()
            var refused: [String: String] = [
                "HS256": try upstream.token(alg: "HS256", kid: "rsa", now: now, ["nonce": "n-1"]),
                "none": try upstream.token(alg: "none", now: now, ["nonce": "n-1"]),
                "key of another type": try upstream.token(alg: "ES256", kid: "rsa", now: now, ["nonce": "n-1"]),
                "unknown kid": try upstream.token(alg: "EdDSA", kid: "stranger", now: now, ["nonce": "n-1"]),
                "expired": try upstream.token(now: now, ["exp": Int(now.timeIntervalSince1970) - 3600, "nonce": "n-1"]),
                "issued later": try upstream.token(now: now, ["iat": Int(now.timeIntervalSince1970) + 3600, "nonce": "n-1"]),
                "another audience": try upstream.token(now: now, ["aud": "someone-else", "nonce": "n-1"]),
                "another issuer": try upstream.token(now: now, ["iss": "https://evil.example", "nonce": "n-1"]),
                "another nonce": try upstream.token(now: now, ["nonce": "n-2"]),
                "no nonce": try upstream.token(now: now, ["sub": "u-nonce"]),
                "no subject": try upstream.token(now: now, ["sub": NSNull(), "nonce": "n-1"]),
                "an access token": try upstream.token(typ: "at+jwt", now: now, ["nonce": "n-1"]),
            ]
            let good = try upstream.token(now: now, ["sub": "u-forged", "nonce": "n-1"])
            refused["forged"] = String(good.dropLast(4)) + (good.hasSuffix("AAAA") ? "BBBB" : "AAAA")
            for (why, token) in refused {
                let answer = try await oidc(client, token)
                #expect(answer.status == .unauthorized && answer.errorCode == "INVALID_ID_TOKEN", "\(why): \(answer.status)")
            }
            let once = try upstream.token(now: now, ["sub": "u-once", "nonce": "n-1"])
            #expect(try await oidc(client, once).status == .ok)
            #expect(try await oidc(client, once).errorCode == "INVALID_ID_TOKEN", "an ID token is accepted once")
            #expect(try await oidc(client, via: "nobody", once).status == .notFound)
            #expect(try h.audit(event: "sign_in_failed").count == refused.count + 1)
        }
    }

    @Test func anUpstreamDownAtStartAnswers503ForItselfUntilItIsBack() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        upstream.state.withLock { $0.down = true }
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            #expect(try await client.send(.get, "/health").status == .ok, "authd starts")
            let token = try upstream.token(now: clock.now(), ["nonce": "n-1"])
            let down = try await oidc(client, token)
            #expect(down.status == .serviceUnavailable && down.errorCode == "UNAVAILABLE")
            let details = (down.json["error"] as? [String: Any])?["details"] as? [String: Any]
            #expect(details?["reason"] as? String == "upstream" && details?["provider"] as? String == "idp", "contract §17: the reason in details")
            #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "ada@example.com"]).status == .ok, "the others work")
            upstream.state.withLock { $0.down = false }
            let fetches = upstream.state.withLock { $0.discoveryFetches }
            #expect(try await oidc(client, try upstream.token(now: clock.now(), ["sub": "u-2", "nonce": "n-1"])).status == .serviceUnavailable,
                "asked again at most once a minute")
            #expect(upstream.state.withLock { $0.discoveryFetches } == fetches)
            clock.advance(by: 61)
            #expect(try await oidc(client, try upstream.token(now: clock.now(), ["sub": "u-3", "nonce": "n-1"])).status == .ok)
        }
    }

    @Test func aKeyTheUpstreamAddsIsFetchedOnceForItsUnknownKid() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        upstream.state.withLock { $0.published = ["rsa"] }
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            #expect(try await oidc(client, try upstream.token(now: clock.now(), ["nonce": "n-1"])).status == .ok)
            upstream.state.withLock { $0.published = ["rsa", "ed"] }
            clock.advance(by: 61)
            let rotated = try upstream.token(alg: "EdDSA", now: clock.now(), ["sub": "u-2", "nonce": "n-1"])
            #expect(try await oidc(client, rotated).status == .ok)
            let fetches = upstream.state.withLock { $0.jwksFetches }
            for i in 0..<5 {
                let unknown = try upstream.token(alg: "EdDSA", kid: "stranger", now: clock.now(), ["sub": "u-x\(i)", "nonce": "n-1"])
                #expect(try await oidc(client, unknown).errorCode == "INVALID_ID_TOKEN")
            }
            #expect(upstream.state.withLock { $0.jwksFetches } - fetches <= 1, "an unknown kid refetches at most once a minute")
        }
    }

    @Test func onlyATrustedUpstreamsEmailMakesOrJoinsAnAccountAndNeverAProtectedOne() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let claims: [String: Any] = ["email": "ada@example.com", "email_verified": true, "nonce": "n-1"]
            // Ada has an account with a verified address (an email sign-in).
            #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "ada@example.com"]).status == .ok)
            let code = try #require(try h.mail(to: "ada@example.com").last?.code)
            let ada = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "ada@example.com", "code": code])
            let adaID = try #require((ada.json["user"] as? [String: Any])?["id"] as? String)

            // An upstream not trusted for email: its own account, with no email.
            let untrusted = try await oidc(client, try upstream.token(now: clock.now(), claims.merging(["sub": "s-1"]) { $1 }))
            let untrustedUser = try #require(untrusted.json["user"] as? [String: Any])
            #expect(untrustedUser["id"] as? String != adaID && untrustedUser["email"] is NSNull)

            // A trusted one joins Ada's account, and Ada is told a new way in was added.
            let trusted = try await oidc(client, via: "trusted", try upstream.token(now: clock.now(), claims.merging(["sub": "s-2"]) { $1 }))
            #expect((trusted.json["user"] as? [String: Any])?["id"] as? String == adaID)
            #expect(try h.mail(to: "ada@example.com").contains { $0.subject.lowercased().contains("sign") && $0.text.contains("Not you?") || $0.text.contains("/not-me") })

            // A protected account (a console operator's) is never joined by email alone.
            let bea = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "bea@example.com"])
            #expect(bea.status == .ok)
            let beaCode = try #require(try h.mail(to: "bea@example.com").last?.code)
            let beaID = try #require(
                (try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "bea@example.com", "code": beaCode]).json["user"] as? [String: Any])?["id"]
                    as? String)
            h.kernel.protectedAccounts.register { $0.lowercased == beaID }
            let blocked = try await oidc(
                client, via: "trusted", try upstream.token(now: clock.now(), ["sub": "s-3", "email": "bea@example.com", "email_verified": true, "nonce": "n-1"]))
            #expect(blocked.status == .ok && (blocked.json["user"] as? [String: Any])?["id"] as? String != beaID)

            // An unverified upstream email joins nothing, trusted or not.
            let unverified = try await oidc(
                client, via: "trusted", try upstream.token(now: clock.now(), ["sub": "s-4", "email": "ada@example.com", "email_verified": false, "nonce": "n-1"]))
            #expect((unverified.json["user"] as? [String: Any])?["id"] as? String != adaID)
        }
    }

    /// Contract §17: a token that would make an account the sign-up policy refuses is 403
    /// `SIGNUP_CLOSED`; joining an account that exists (a trusted upstream's verified email) is not;
    /// under `domains` an upstream that gives no trusted verified email makes none.
    @Test func aClosedSignUpRefusesANewAccountButNotAJoin() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        for mode in [#"{"mode":"invite"}"#, #"{"mode":"domains","domains":["example.com"]}"#] {
            let h = try await harness(upstream, clock: clock, config: Self.config().replacingOccurrences(of: #"{"mail""#, with: #"{"signup":\#(mode),"mail""#))
            try await h.test { client in
                let stranger = try await oidc(client, try upstream.token(now: clock.now(), ["sub": "s-new", "nonce": "n-1"]))
                #expect(stranger.status == .forbidden && stranger.errorCode == "SIGNUP_CLOSED", "\(mode): an untrusted upstream gives no email")
                let trustedOutside = try await oidc(
                    client, via: "trusted", try upstream.token(now: clock.now(), ["sub": "s-out", "email": "eve@elsewhere.test", "email_verified": true, "nonce": "n-1"]))
                #expect(trustedOutside.status == .forbidden && trustedOutside.errorCode == "SIGNUP_CLOSED", "\(mode)")
                _ = try await h.kernel.invitations.invite(email: "ada@example.com", groups: [], displayName: nil, by: "test", vouched: false)
                #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "ada@example.com"]).status == .ok)
                let code = try #require(try h.mail(to: "ada@example.com").last?.code)
                let ada = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "ada@example.com", "code": code])
                let adaID = try #require((ada.json["user"] as? [String: Any])?["id"] as? String)
                let joined = try await oidc(
                    client, via: "trusted", try upstream.token(now: clock.now(), ["sub": "s-ada", "email": "ada@example.com", "email_verified": true, "nonce": "n-1"]))
                #expect(joined.status == .ok && (joined.json["user"] as? [String: Any])?["id"] as? String == adaID, "\(mode): a join is no sign-up")
                if mode.contains("domains") {
                    let colleague = try await oidc(
                        client, via: "trusted", try upstream.token(now: clock.now(), ["sub": "s-bo", "email": "bo@example.com", "email_verified": true, "nonce": "n-1"]))
                    #expect(colleague.status == .ok, "a trusted verified address of the domain makes its account")
                }
            }
        }
    }

    @Test func aSignedInUserLinksTheIdentityFromAFreshSessionAndOneLinkedElsewhereIs409() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            let ada = try await h.signIn("ada", email: "ada@example.com")
            let linked = try await oidc(client, try upstream.token(now: clock.now(), ["sub": "s-ada", "nonce": "n-1"]), bearer: ada.accessToken)
            #expect(linked.status == .ok && (linked.json["user"] as? [String: Any])?["id"] as? String == ada.user.id.lowercased)
            // The same upstream identity from elsewhere now signs Ada in.
            let again = try await oidc(client, try upstream.token(now: clock.now(), ["sub": "s-ada", "nonce": "n-1"]))
            #expect((again.json["user"] as? [String: Any])?["id"] as? String == ada.user.id.lowercased)
            // Linked to Ada, it cannot be linked to Bea.
            let bea = try await h.signIn("bea", email: "bea@example.com")
            let taken = try await oidc(client, try upstream.token(now: clock.now(), ["sub": "s-ada", "nonce": "n-1"]), bearer: bea.accessToken)
            #expect(taken.status == .conflict && taken.errorCode == "IDENTITY_IN_USE")
            // A stale session does not add a way in.
            clock.advance(by: 601)
            let stale = try await oidc(client, try upstream.token(now: clock.now(), ["sub": "s-bea", "nonce": "n-1"]), bearer: bea.accessToken)
            #expect(stale.errorCode == "REAUTH_REQUIRED")
        }
    }

    @Test func kindsAndNonceHashes() async throws {
        let upstream = UpstreamStandIn(), clock = ManualClock()
        let h = try await harness(upstream, clock: clock)
        try await h.test { client in
            // sha256: the claim is the hex SHA-256 of the nonce the app sent.
            let hashed = try upstream.token(now: clock.now(), ["sub": "h-1", "nonce": Hex.encode(SHA256.hash("raw nonce"))])
            #expect(try await oidc(client, via: "hashed", hashed, nonce: "raw nonce").status == .ok)
            // Microsoft: the identity is the tenant and the object id, whatever `sub` says.
            let first = try await oidc(client, via: "ms", try upstream.token(now: clock.now(), ["sub": "a", "tid": "t-1", "oid": "o-1"]), nonce: nil)
            let second = try await oidc(client, via: "ms", try upstream.token(now: clock.now(), ["sub": "b", "tid": "t-1", "oid": "o-1"]), nonce: nil)
            #expect(first.status == .ok && (first.json["user"] as? [String: Any])?["id"] as? String == (second.json["user"] as? [String: Any])?["id"] as? String)
            let noTenant = try await oidc(client, via: "ms", try upstream.token(now: clock.now(), ["sub": "c"]), nonce: nil)
            #expect(noTenant.errorCode == "INVALID_ID_TOKEN")
        }
        await #expect(throws: (any Error).self) {
            _ = try await harness(
                UpstreamStandIn(),
                config: #"{"providers":["oidc"],"oidc":{"providers":{"ms":{"issuer":"https://login.example","client_id":"a","kind":"microsoft","trust_email":true}}}}"#)
        }
        await #expect(throws: (any Error).self) {
            _ = try await harness(UpstreamStandIn(), config: #"{"providers":["oidc"],"oidc":{"providers":{"Bad Name":{"issuer":"https://x.example","client_id":"a"}}}}"#)
        }
        await #expect(throws: (any Error).self) {
            _ = try await harness(UpstreamStandIn(), config: #"{"providers":["oidc"],"oidc":{"providers":{"plain":{"issuer":"http://x.example","client_id":"a"}}}}"#)
        }
    }
}
