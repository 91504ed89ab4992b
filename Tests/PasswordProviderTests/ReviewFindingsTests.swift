import AuthKernel
import AuthKernelTesting
import EmailProvider
import Foundation
import HTTPTypes
import PINProvider
@testable import PasswordProvider
import Testing

/// Attacks an outside security review ran against the password provider (issue #24), each replayed
/// and refused. The names say the attack; every one of these passed (the attack worked) before.
struct ReviewFindingsPasswordTests {
    typealias T = PasswordTest
    static let owner = "owner@x.io"
    static let ownerPassword = "the owner's own secret"
    static let attackerPassword = "the attacker's secret"

    func harness(_ config: String = T.config) async throws -> TestHarness {
        try await TestHarness.make(providers: [EmailProvider.self, PINProvider.self, PasswordProvider.self], config: config)
    }

    func register(_ client: HarnessClient, _ password: String, name: String, bearer: String? = nil) async throws {
        let r = try await client.send(
            .post, "/api/v1/auth/password/register", json: ["email": Self.owner, "password": password, "display_name": name], bearer: bearer)
        #expect(r.status == .accepted)
    }

    func verify(_ client: HarnessClient, _ h: TestHarness, _ password: String, bearer: String? = nil) async throws -> HarnessResponse {
        let code = try #require(try T.lastCode(h, to: Self.owner))
        return try await client.send(
            .post, "/api/v1/auth/password/verify-email", json: ["email": Self.owner, "code": code, "password": password], bearer: bearer)
    }

    /// The mailbox's owner completes their registration with their password and name, and the
    /// attacker's password opens nothing.
    func expectOwnersAccount(_ client: HarnessClient, _ verified: HarnessResponse, notUser: String? = nil) async throws {
        #expect(verified.status == .ok)
        let user = try verified.decode(SessionResponse.self).user
        #expect(user.displayName == "Owner" && user.emailVerified && user.id != notUser)
        #expect(try await T.login(client, Self.owner, Self.ownerPassword).status == .ok)
        #expect(try await T.login(client, Self.owner, Self.attackerPassword).errorCode == "INVALID_CREDENTIALS")
    }

    // MARK: 1. Registration takeover

    @Test func reviewFindingAttackerRegistersSecondToRewriteTheOwnersPendingRegistration() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            try await register(client, Self.ownerPassword, name: "Owner")
            h.clock.advance(by: 61)
            try await register(client, Self.attackerPassword, name: "Attacker")
            // The attacker cannot complete without the code; the owner completes their own.
            try await expectOwnersAccount(client, try await verify(client, h, Self.ownerPassword))
        }
    }

    @Test func reviewFindingAttackerRegistersFirstToPreHijackTheAccount() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            try await register(client, Self.attackerPassword, name: "Attacker")
            h.clock.advance(by: 61)
            try await register(client, Self.ownerPassword, name: "Owner")
            try await expectOwnersAccount(client, try await verify(client, h, Self.ownerPassword))
        }
    }

    @Test func reviewFindingAttackerWithABearerRegistersSecondToLinkTheOwnersEmailToTheirAccount() async throws {
        let h = try await harness()
        let attacker = try await h.signIn("attacker", email: "attacker@x.io")
        try await h.test { client async throws in
            try await register(client, Self.ownerPassword, name: "Owner")
            h.clock.advance(by: 61)
            try await register(client, Self.attackerPassword, name: "Attacker", bearer: attacker.accessToken)
            try await expectOwnersAccount(client, try await verify(client, h, Self.ownerPassword), notUser: attacker.user.id)
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: attacker.accessToken)
            #expect(me.json["email"] as? String == "attacker@x.io" && me.json["auth_providers"] as? [String] == ["test"])
        }
    }

    @Test func reviewFindingAttackerWithABearerRegistersFirstAndWaitsForTheOwner() async throws {
        let h = try await harness()
        let attacker = try await h.signIn("attacker", email: "attacker@x.io")
        try await h.test { client async throws in
            try await register(client, Self.attackerPassword, name: "Attacker", bearer: attacker.accessToken)
            h.clock.advance(by: 61)
            try await register(client, Self.ownerPassword, name: "Owner")
            // Even with the attacker's Bearer in hand, the code and the owner's password make the owner's account.
            try await expectOwnersAccount(client, try await verify(client, h, Self.ownerPassword), notUser: attacker.user.id)
            #expect(try await h.kernel.users.user(email: Self.owner)?.id.lowercased != attacker.user.id)
        }
    }

    @Test func aBearerGivenAtRegistrationLinksOnlyWhenTheSameUsersBearerComesBack() async throws {
        let h = try await harness()
        let me = try await h.signIn("me", email: nil)
        let someoneElse = try await h.signIn("someone")
        try await h.test { client async throws in
            try await register(client, Self.ownerPassword, name: "Owner", bearer: me.accessToken)
            #expect(try await verify(client, h, Self.ownerPassword).errorCode == "INVALID_CODE")
            #expect(try await verify(client, h, Self.ownerPassword, bearer: someoneElse.accessToken).errorCode == "INVALID_CODE")
            let linked = try await verify(client, h, Self.ownerPassword, bearer: me.accessToken)
            #expect(try linked.decode(SessionResponse.self).user.id == me.user.id)
        }
    }

    @Test func verifyEmailNeedsThePasswordChosenAtRegistration() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            try await register(client, Self.ownerPassword, name: "Owner")
            let code = try #require(try T.lastCode(h, to: Self.owner))
            let missing = try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": Self.owner, "code": code])
            #expect(missing.status == .badRequest && missing.errorCode == "INVALID_REQUEST")
            // A right code with a wrong password reads as a wrong code, and counts as one.
            let wrong = try await verify(client, h, "not the password at all")
            #expect(wrong.status == .unauthorized && wrong.errorCode == "INVALID_CODE")
            try await expectOwnersAccount(client, try await verify(client, h, Self.ownerPassword))
        }
    }

    @Test func withoutRequiredVerificationTheCodeDoesNotVerifySomeoneElsesAccount() async throws {
        let h = try await harness(#"{"mail":{"transport":"outbox"},"password":{"require_email_verification":false}}"#)
        try await h.test { client async throws in
            try await register(client, Self.attackerPassword, name: "Attacker")
            // The mailbox's owner gets the code, but it does not verify the attacker's account for them.
            #expect(try await verify(client, h, Self.ownerPassword).errorCode == "INVALID_CODE")
            #expect(try await h.kernel.users.user(email: Self.owner)?.emailVerified == false)
        }
    }

    // MARK: 2. Credentials planted with a stolen token

    @Test func reviewFindingAPINPlantedWithAStolenTokenDiesWithTheOwnersReset() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let stolen = try await T.registered(client, h, email: Self.owner, password: Self.ownerPassword)
            #expect(try await client.send(.put, "/api/v1/auth/pin", json: ["pin": "4711"], bearer: stolen.accessToken).status == .noContent)
            #expect(try await client.send(.put, "/api/v1/auth/username", json: ["username": "thief"], bearer: stolen.accessToken).status == .ok)
            // The owner is told a sign-in method was added.
            let notice = try #require(try await T.waitForMail(h, count: 2).last)
            #expect(notice.subject == "A new way to sign in to your authd account")
            #expect(notice.text.contains("a PIN"))

            _ = try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": Self.owner])
            let mails = try await T.waitForMail(h, count: 3)
            let code = try #require(mails.last?.code)
            let reset = try await client.send(
                .post, "/api/v1/auth/password/reset/email/verify", json: ["email": Self.owner, "code": code, "new_password": "the owner's new secret"])
            #expect(reset.status == .ok)
            #expect((try h.mail().last?.text)?.contains("the PIN") == true)
            let planted = try await client.send(.post, "/api/v1/auth/pin/verify", json: ["username": "thief", "pin": "4711"])
            #expect(planted.status == .unauthorized && planted.errorCode == "INVALID_CREDENTIALS")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: stolen.accessToken).status == .unauthorized)
            let me = try await T.login(client, Self.owner, "the owner's new secret").decode(SessionResponse.self).user
            #expect(!me.authProviders.contains("pin"))
        }
    }

    @Test func reviewFindingAStaleStolenTokenCannotSetAPIN() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let stolen = try await T.registered(client, h, email: Self.owner, password: Self.ownerPassword)
            h.clock.advance(by: 601)
            let r = try await client.send(.put, "/api/v1/auth/pin", json: ["pin": "4711"], bearer: stolen.accessToken)
            #expect(r.status == .forbidden && r.errorCode == "REAUTH_REQUIRED")
            // A refresh does not make a session fresh again; signing in does.
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": stolen.refreshToken]).decode(SessionResponse.self)
            #expect(try await client.send(.put, "/api/v1/auth/pin", json: ["pin": "4711"], bearer: refreshed.accessToken).errorCode == "REAUTH_REQUIRED")
            let again = try await T.login(client, Self.owner, Self.ownerPassword).decode(SessionResponse.self)
            #expect(try await client.send(.put, "/api/v1/auth/pin", json: ["pin": "4711"], bearer: again.accessToken).status == .noContent)
        }
    }

    @Test func accessTokensCarryAuthTimeWhichARefreshKeeps() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let session = try await T.registered(client, h, email: Self.owner, password: Self.ownerPassword)
            let signedInAt = Int(h.clock.now().timeIntervalSince1970)
            h.clock.advance(by: 120)
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": session.refreshToken]).decode(SessionResponse.self)
            for token in [session.accessToken, refreshed.accessToken] {
                let payload = try #require(Base64URL.decode(token.split(separator: ".")[1]))
                let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
                #expect(claims["auth_time"] as? Int == signedInAt)
            }
        }
    }

    @Test func addingAFirstPasswordToAnAccountNeedsAFreshSessionAndIsNoticed() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": Self.owner])
            let code = try #require(try T.lastCode(h, to: Self.owner))
            let session = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": Self.owner, "code": code]).decode(SessionResponse.self)
            h.clock.advance(by: 601)
            let stale = try await client.send(.post, "/api/v1/auth/password/change", json: ["new_password": Self.attackerPassword], bearer: session.accessToken)
            #expect(stale.status == .forbidden && stale.errorCode == "REAUTH_REQUIRED")
            h.clock.advance(by: 60)
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": Self.owner])
            let again = try await client.send(
                .post, "/api/v1/auth/email/verify", json: ["email": Self.owner, "code": try #require(try T.lastCode(h, to: Self.owner))]
            ).decode(SessionResponse.self)
            #expect(try await client.send(.post, "/api/v1/auth/password/change", json: ["new_password": Self.ownerPassword], bearer: again.accessToken).status == .noContent)
            let notice = try await T.waitForMail(h, count: 4).first { $0.subject == "A new way to sign in to your authd account" }
            #expect((notice?.text)?.contains("a password") == true)
        }
    }

    // MARK: 2, second pass: linking is adding a way in

    @Test func reviewFindingAStaleStolenTokenCannotLinkAPasswordOrAnEmailToTheAccount() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let stolen = try await T.registered(client, h, email: Self.owner, password: Self.ownerPassword)
            h.clock.advance(by: 601)
            // A password for the attacker's own address, which would have replaced the owner's...
            let register = try await client.send(
                .post, "/api/v1/auth/password/register", json: ["email": "me@attacker.example", "password": Self.attackerPassword],
                bearer: stolen.accessToken)
            #expect(register.status == .forbidden && register.errorCode == "REAUTH_REQUIRED")
            // ...and an email sign-in, whose new session would have been fresh.
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "me@attacker.example"])
            let code = try #require(try T.lastCode(h, to: "me@attacker.example"))
            let link = try await client.send(
                .post, "/api/v1/auth/email/verify", json: ["email": "me@attacker.example", "code": code], bearer: stolen.accessToken)
            #expect(link.status == .forbidden && link.errorCode == "REAUTH_REQUIRED")
            #expect(try await T.login(client, Self.owner, Self.ownerPassword).status == .ok)
        }
    }

    @Test func reviewFindingALinkNeverReplacesTheAccountsPassword() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let fresh = try await T.registered(client, h, email: Self.owner, password: Self.ownerPassword)
            let register = try await client.send(
                .post, "/api/v1/auth/password/register", json: ["email": "second@x.io", "password": Self.attackerPassword],
                bearer: fresh.accessToken)
            #expect(register.status == .conflict && register.errorCode == "INVALID_STATE")
            #expect(try await T.login(client, Self.owner, Self.ownerPassword).status == .ok)
            #expect(try await T.login(client, Self.owner, Self.attackerPassword).errorCode == "INVALID_CREDENTIALS")
        }
    }

    @Test func reviewFindingAResetOfAnAccountNobodyVerifiedRemovesWhatTheSquatterAttached() async throws {
        let h = try await harness(#"{"mail":{"transport":"outbox"},"password":{"require_email_verification":false}}"#)
        try await h.test { client async throws in
            try await register(client, Self.attackerPassword, name: "Squatter")
            let squatted = try #require(try await h.kernel.users.user(email: Self.owner))
            // The squatter links a way back in (as an Apple ID would be) and a user name.
            _ = try await h.kernel.users.update(squatted.id) {
                $0.identities.append(Identity(provider: "test", subject: "squatter"))
                $0.username = "squatter"
            }
            _ = try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": Self.owner])
            let code = try #require(try await T.waitForMail(h, count: 2).last?.code)
            let reset = try await client.send(
                .post, "/api/v1/auth/password/reset/email/verify", json: ["email": Self.owner, "code": code, "new_password": Self.ownerPassword])
            #expect(reset.status == .ok)
            let owned = try #require(try await h.kernel.users.user(id: squatted.id))
            #expect(owned.emailVerified && owned.username == nil)
            #expect(owned.identities == [Identity(provider: "password", subject: Self.owner)])
            #expect(try await h.kernel.users.user(identity: Identity(provider: "test", subject: "squatter")) == nil)
        }
    }

    // MARK: 5. Squatted identities

    @Test func reviewFindingAPasswordSquattedOnAnUnverifiedAddressBlocksTheOwnersPassword() async throws {
        let h = try await harness(#"{"mail":{"transport":"outbox"},"password":{"require_email_verification":false}}"#)
        try await h.test { client async throws in
            try await register(client, Self.attackerPassword, name: "Squatter")
            _ = try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": Self.owner])
            let owner = try await client.send(
                .post, "/api/v1/auth/email/verify", json: ["email": Self.owner, "code": try #require(try T.lastCode(h, to: Self.owner))]
            ).decode(SessionResponse.self)
            #expect(owner.user.email == Self.owner && owner.user.emailVerified)
            // The squatter's password identity went with the address: the owner can set theirs.
            let set = try await client.send(.post, "/api/v1/auth/password/change", json: ["new_password": Self.ownerPassword], bearer: owner.accessToken)
            #expect(set.status == .noContent)
            #expect(try await T.login(client, Self.owner, Self.ownerPassword).status == .ok)
            #expect(try await T.login(client, Self.owner, Self.attackerPassword).errorCode == "INVALID_CREDENTIALS")
        }
    }

    // MARK: 8. A stranger can block the owner's reset

    @Test func reviewFindingStrangersDeviceResetsDoNotUseUpTheOwnersEmailReset() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: Self.owner, password: Self.ownerPassword)
            for _ in 0..<3 {
                _ = try await client.send(.post, "/api/v1/auth/password/reset/device/initiate", json: ["email": Self.owner, "new_password": Self.attackerPassword])
            }
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": Self.owner]).status == .ok)
        }
    }

    @Test func pendingRegistrationsOfOneClientPushOutOnlyTheirOwnAndExpire() {
        typealias P = PasswordProvider.PendingRegistration
        func entry(_ client: String, at t: Double) -> P { P(passwordHash: "h-\(client)-\(t)", displayName: nil, linkUserID: nil, createdAt: t, client: client) }
        let owner = entry("owner", at: 100)
        var list = [owner]
        for i in 1...8 {
            list = P.all(in: P.payload(list, adding: entry("stranger", at: 100 + Double(i)), ttl: 900))
        }
        #expect(list.count == PasswordSettings.maxPendingRegistrations && list.contains(owner))
        // Past the code's lifetime a registration is gone whoever comes next.
        list = P.all(in: P.payload(list, adding: entry("late", at: 2000), ttl: 900))
        #expect(list.map(\.client) == ["late"])
    }

    // MARK: 12. Sign-in racing a reset

    @Test func reviewFindingASignInThatCheckedTheOldPasswordCannotOutliveAReset() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let user = try await T.registered(client, h, email: Self.owner, password: Self.ownerPassword).user
            let id = try #require(UUID(uuidString: user.id))
            let checked = try #require(try await h.kernel.users.user(id: id))
            // The reset ends every session while this sign-in's password check is still running...
            try await h.kernel.sessions.revokeAll(of: checked.id)
            // ...so the session it would start afterwards is refused, in the same write.
            await #expect(throws: AuthError.invalidCredentials) {
                try await h.kernel.sessions.startSession(checked, amr: ["password"], device: .none)
            }
            #expect(try await h.kernel.sessions.sessions(of: checked.id).isEmpty)
        }
    }
}
