import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import PasswordProvider
import Testing

struct DeviceResetTests {
    typealias T = PasswordTest
    static let newPassword = "approved elsewhere"

    func initiate(_ client: HarnessClient, _ email: String, device: String = "new laptop") async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/password/reset/device/initiate", json: ["email": email, "new_password": Self.newPassword, "device_name": device])
    }

    func status(_ client: HarnessClient, _ id: String) async throws -> String? {
        try await client.send(.get, "/api/v1/auth/password/reset/device/\(id)").json["status"] as? String
    }

    /// Contract §12: a leaked access token alone cannot start a reset, approve it and own the
    /// password; a session past auth.fresh_auth approves only with its own refresh token.
    @Test func aStaleSessionApprovesAResetOnlyWithItsRefreshToken() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let phone = try await T.registered(client, h, email: "s@x.io")
            h.clock.advance(by: 601)
            let r = try await initiate(client, "s@x.io")
            let id = try #require(r.json["request_id"] as? String), match = try #require(r.json["match_code"] as? String)
            let bare = try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": match], bearer: phone.accessToken)
            #expect(bare.status == .forbidden && bare.errorCode == "REAUTH_REQUIRED")
            #expect(try await status(client, id) == "pending", "nothing was approved, and no try was spent")
            let proven = try await client.send(
                .post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": match, "refresh_token": phone.refreshToken], bearer: phone.accessToken)
            #expect(proven.status == .noContent)
            #expect(try await status(client, id) == "approved")
        }
    }

    @Test func approvedFromAnotherSessionThenCompletedOnce() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let phone = try await T.registered(client, h, email: "d@x.io")
            let r = try await initiate(client, "d@x.io")
            #expect(r.status == .accepted)
            let id = try #require(r.json["request_id"] as? String)
            let match = try #require(r.json["match_code"] as? String)
            #expect(id.count >= 22 && match.count == 3 && r.json["expires_at"] is String)
            #expect(try await status(client, id) == "pending")

            let list = try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken)
            let items = try #require(list.json["approvals"] as? [[String: Any]])
            #expect(items.count == 1)
            #expect(items[0]["id"] as? String == id && items[0]["kind"] as? String == "password_reset" && items[0]["device_name"] as? String == "new laptop")
            #expect(Set(items[0].keys) == ["id", "kind", "created_at", "expires_at", "device_name", "platform", "network"])  // never the match code

            #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/\(id)/complete").errorCode == "INVALID_STATE")
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": match]).status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": match], bearer: phone.accessToken).status == .noContent)
            #expect(try await status(client, id) == "approved")
            #expect((try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken).json["approvals"] as? [Any])?.isEmpty == true)

            #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/\(id)/complete").status == .ok)
            #expect(try await status(client, id) == "completed")
            let twice = try await client.send(.post, "/api/v1/auth/password/reset/device/\(id)/complete")
            #expect(twice.status == .conflict && twice.errorCode == "INVALID_STATE")

            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: phone.accessToken).status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": phone.refreshToken]).status == .unauthorized)
            #expect(try await T.login(client, "d@x.io", T.password).status == .unauthorized)
            #expect(try await T.login(client, "d@x.io", Self.newPassword).status == .ok)
            let notice = try #require(h.mail().last)
            #expect(notice.text.contains("new laptop"))
        }
    }

    @Test func threeWrongMatchCodesDenyTheRequest() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let phone = try await T.registered(client, h, email: "m@x.io")
            let r = try await initiate(client, "m@x.io")
            let id = try #require(r.json["request_id"] as? String)
            let match = try #require(r.json["match_code"] as? String)
            let wrong = match == "000" ? "111" : "000"
            for _ in 0..<3 {
                let answer = try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": wrong], bearer: phone.accessToken)
                #expect(answer.status == .unauthorized && answer.errorCode == "INVALID_CODE")
            }
            #expect(try await status(client, id) == "denied")
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": match], bearer: phone.accessToken).errorCode == "INVALID_STATE")
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/\(id)/complete").errorCode == "INVALID_STATE")
            #expect(try await T.login(client, "m@x.io", T.password).status == .ok)
        }
    }

    @Test func denialAndExpiry() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let phone = try await T.registered(client, h, email: "e@x.io")
            let denied = try #require(try await initiate(client, "e@x.io").json["request_id"] as? String)
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(denied)/deny", bearer: phone.accessToken).status == .noContent)
            #expect(try await status(client, denied) == "denied")
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(denied)/deny", bearer: phone.accessToken).errorCode == "INVALID_STATE")
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/\(denied)/complete").errorCode == "INVALID_STATE")

            let r = try await initiate(client, "e@x.io")
            let late = try #require(r.json["request_id"] as? String)
            h.clock.advance(by: 60)
            #expect(try await status(client, late) == "expired")
            #expect((try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken).json["approvals"] as? [Any])?.isEmpty == true)
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(late)/approve", json: ["match_code": r.json["match_code"] as? String ?? ""], bearer: phone.accessToken).errorCode == "INVALID_STATE")
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/\(late)/complete").errorCode == "INVALID_STATE")
            #expect(try await client.send(.get, "/api/v1/auth/password/reset/device/nonexistent").status == .notFound)
        }
    }

    @Test func anotherUsersSessionCannotSeeOrApprove() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "victim@x.io")
            let stranger = try await T.registered(client, h, email: "stranger@x.io")
            let r = try await initiate(client, "victim@x.io")
            let id = try #require(r.json["request_id"] as? String)
            #expect((try await client.send(.get, "/api/v1/auth/approvals", bearer: stranger.accessToken).json["approvals"] as? [Any])?.isEmpty == true)
            let approve = try await client.send(.post, "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": r.json["match_code"] as? String ?? ""], bearer: stranger.accessToken)
            #expect(approve.status == .notFound && approve.errorCode == "NOT_FOUND")
            #expect(try await client.send(.post, "/api/v1/auth/approvals/\(id)/deny", bearer: stranger.accessToken).status == .notFound)
            #expect(try await status(client, id) == "pending")
        }
    }

    @Test func unknownEmailsGetAnIndistinguishableRequestThatOnlyExpires() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "real@x.io")
            let known = try await initiate(client, "real@x.io")
            let unknown = try await initiate(client, "ghost@x.io")
            #expect(known.status == unknown.status)
            #expect(Set(known.json.keys) == Set(unknown.json.keys))
            let ghost = try #require(unknown.json["request_id"] as? String)
            #expect(try await status(client, ghost) == "pending")
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/\(ghost)/complete").errorCode == "INVALID_STATE")
            h.clock.advance(by: 60)
            #expect(try await status(client, ghost) == "expired")
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/device/initiate", json: ["email": "ghost@x.io", "new_password": "123456"]).errorCode == "WEAK_PASSWORD")
        }
    }

    @Test func pendingResetsPerAccountAreCapped() async throws {
        let h = try await T.harness(#"{"mail":{"transport":"outbox"},"password":{"max_pending_resets":2,"resets_per_email":{"limit":10,"window":60},"resets_per_email_ip":{"limit":10,"window":60}}}"#)
        try await h.test { client async throws in
            let phone = try await T.registered(client, h, email: "flood@x.io")
            for _ in 0..<4 { #expect(try await initiate(client, "flood@x.io").status == .accepted) }
            #expect((try await client.send(.get, "/api/v1/auth/approvals", bearer: phone.accessToken).json["approvals"] as? [Any])?.count == 2)
        }
    }

    @Test func subscribersHearOfNewRequestsAtOnce() async throws {
        let h = try await T.harness()
        try await h.test { client async throws in
            let phone = try await T.registered(client, h, email: "sse@x.io")
            let userID = UUID(uuidString: phone.user.id)!
            let stream = try h.kernel.approvals.subscribe(userID: userID)
            let other = try h.kernel.approvals.subscribe(userID: UUID())
            _ = other
            let r = try await initiate(client, "sse@x.io")
            _ = try await initiate(client, "nobody@x.io")  // decoys reach nobody
            var iterator = stream.makeAsyncIterator()
            let event = await iterator.next()
            #expect(event?.id == r.json["request_id"] as? String)
            #expect(event?.kind == "password_reset")
            #expect(h.kernel.approvals.subscriberCount == 2)
        }
    }
}
