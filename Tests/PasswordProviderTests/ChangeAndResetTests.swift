import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import PasswordProvider
import Synchronization
import Testing

struct ChangeAndResetTests {
    typealias T = PasswordTest
    static let newPassword = "a brand new secret"

    @Test func changeNeedsTheCurrentPasswordAndEndsOtherSessions() async throws {
        let h = try await T.harness()
        let changes = Mutex<[String]>([])
        h.kernel.events.onCredentialChange { _, credential in changes.withLock { $0.append(credential) } }
        try await h.test { client async throws in
            let first = try await T.registered(client, h, email: "c@x.io")
            let second = try await T.login(client, "c@x.io", T.password).decode(SessionResponse.self)
            let path = "/api/v1/auth/password/change"
            #expect(try await client.send(.post, path, json: ["new_password": Self.newPassword]).status == .unauthorized)
            #expect(try await client.send(.post, path, json: ["new_password": Self.newPassword], bearer: first.accessToken).errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, path, json: ["current_password": "wrong one!", "new_password": Self.newPassword], bearer: first.accessToken).errorCode == "INVALID_CREDENTIALS")
            #expect(try await client.send(.post, path, json: ["current_password": T.password, "new_password": "password1"], bearer: first.accessToken).errorCode == "WEAK_PASSWORD")
            let ok = try await client.send(.post, path, json: ["current_password": T.password, "new_password": Self.newPassword], bearer: first.accessToken)
            #expect(ok.status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: first.accessToken).status == .ok)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: second.accessToken).status == .unauthorized)
            #expect(try await T.login(client, "c@x.io", T.password).status == .unauthorized)
            #expect(try await T.login(client, "c@x.io", Self.newPassword).status == .ok)
            let notice = try #require(h.mail().last)
            #expect(notice.to == "c@x.io" && notice.subject == "Your authd password was changed")
            #expect(changes.withLock { $0 } == ["password"])
        }
    }

    @Test func anEmailCodeUserCanAddAPassword() async throws {
        let h = try await T.harness()
        let s = try await h.signIn("coder", email: "coder@x.io")
        let anonymous = try await h.kernel.sessions.startSession(try await h.kernel.users.createAnonymous(), amr: ["anonymous"], device: .none)
        try await h.test { client async throws in
            let added = try await client.send(.post, "/api/v1/auth/password/change", json: ["new_password": Self.newPassword], bearer: s.accessToken)
            #expect(added.status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).json["auth_providers"] as? [String] == ["test", "password"])
            #expect(try await T.login(client, "coder@x.io", Self.newPassword).status == .ok)
            let noEmail = try await client.send(.post, "/api/v1/auth/password/change", json: ["new_password": Self.newPassword], bearer: anonymous.accessToken)
            #expect(noEmail.status == .conflict && noEmail.errorCode == "INVALID_STATE")
        }
    }

    @Test func emailResetByCode() async throws {
        let h = try await T.harness()
        let changes = Mutex<[String]>([])
        h.kernel.events.onCredentialChange { user, _ in changes.withLock { $0.append(user.lowercased) } }
        try await h.test { client async throws in
            let s = try await T.registered(client, h, email: "r@x.io")
            let before = try h.mail().count
            let known = try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": "r@x.io"])
            let unknown = try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": "ghost@x.io"])
            #expect(known.status == .ok && unknown.status == .ok)
            #expect(known.json as NSDictionary == unknown.json as NSDictionary)
            let mail = try await T.waitForMail(h, count: before + 1)
            try await Task.sleep(for: .milliseconds(100))
            #expect(try h.mail().count == before + 1)  // nothing for the unknown address
            #expect(mail.last?.to == "r@x.io")
            let code = try #require(mail.last?.code)

            let path = "/api/v1/auth/password/reset/email/verify"
            #expect(try await client.send(.post, path, json: ["email": "r@x.io", "code": code, "new_password": "123456789"]).errorCode == "WEAK_PASSWORD")
            let wrongCode = code == "000000" ? "111111" : "000000"
            #expect(try await client.send(.post, path, json: ["email": "r@x.io", "code": wrongCode, "new_password": Self.newPassword]).errorCode == "INVALID_CODE")
            #expect(try await client.send(.post, path, json: ["email": "ghost@x.io", "code": code, "new_password": Self.newPassword]).errorCode == "INVALID_CODE")
            let done = try await client.send(.post, path, json: ["email": "r@x.io", "code": code, "new_password": Self.newPassword])
            #expect(done.status == .ok)
            #expect(try await client.send(.post, path, json: ["email": "r@x.io", "code": code, "new_password": Self.newPassword]).errorCode == "INVALID_CODE")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken]).status == .unauthorized)
            #expect(try await T.login(client, "r@x.io", Self.newPassword).status == .ok)
            #expect(try h.mail().last?.subject == "Your authd password was changed")
            #expect(changes.withLock { $0 } == [s.user.id.lowercased()])
        }
    }

    @Test func resetsPerEmailAreLimitedAlikeForKnownAndUnknown() async throws {
        let h = try await T.harness(#"{"mail":{"transport":"outbox"},"password":{"resets_per_email":{"limit":1,"window":600},"resets_per_ip":{"limit":100,"window":600}}}"#)
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "k@x.io")
            for email in ["k@x.io", "u@x.io"] {
                // A client's first request for an email is its own; its next ones meet the email's ceiling.
                for _ in 0..<2 { #expect(try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": email]).status == .ok) }
                let again = try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": email])
                #expect(again.status == .tooManyRequests && again.retryAfter == 600)
                // Device resets (which mail nothing) have a budget of their own.
                for _ in 0..<2 {
                    #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/initiate", json: ["email": email, "new_password": Self.newPassword]).status == .accepted)
                }
                let device = try await client.send(.post, "/api/v1/auth/password/reset/device/initiate", json: ["email": email, "new_password": Self.newPassword])
                #expect(device.status == .tooManyRequests && device.retryAfter == 600)
            }
        }
    }
}
