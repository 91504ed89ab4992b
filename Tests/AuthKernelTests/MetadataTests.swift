import AuthdCore
import AuthdServer
import AuthKernel
import AuthKernelTesting
import AuthStorage
import Foundation
import HTTPTypes
import Testing

/// `user_metadata` and `app_metadata` (contract §8): who may set which, their bounds, the token claim.
struct MetadataTests {
    @Test func theUserSetsUserMetadataButNeverAppMetadata() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect((me.json["user_metadata"] as? [String: Any])?.isEmpty == true && (me.json["app_metadata"] as? [String: Any])?.isEmpty == true)

            let set = try await client.send(.patch, "/api/v1/auth/me", json: ["user_metadata": ["theme": "dark", "n": 3]], bearer: s.accessToken)
            #expect(set.status == .ok)
            #expect((set.json["user_metadata"] as? [String: Any])?["theme"] as? String == "dark")
            #expect((set.json["user_metadata"] as? [String: Any])?["n"] as? Int == 3)
            // Replaced whole, and the display name is left alone when not sent.
            _ = try await client.send(.patch, "/api/v1/auth/me", json: ["display_name": "Ada"], bearer: s.accessToken)
            let both = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect(both.json["display_name"] as? String == "Ada" && (both.json["user_metadata"] as? [String: Any])?["theme"] as? String == "dark")

            let forged = try await client.send(.patch, "/api/v1/auth/me", json: ["app_metadata": ["role": "admin"], "display_name": "Eve"], bearer: s.accessToken)
            #expect(forged.status == .badRequest && forged.errorCode == "INVALID_REQUEST")
            #expect(((forged.json["error"] as? [String: Any])?["details"] as? [String: Any])?["field"] as? String == "app_metadata")
            let after = try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken)
            #expect(after.json["display_name"] as? String == "Ada", "nothing changed")

            let big = try await client.send(.patch, "/api/v1/auth/me", json: ["user_metadata": ["x": String(repeating: "a", count: 4100)]], bearer: s.accessToken)
            #expect(big.status == .badRequest && big.errorCode == "INVALID_REQUEST")
            for bad in [["user_metadata": [1, 2]], ["user_metadata": "text"], [:]] as [[String: Any]] {
                let r = try await client.send(.patch, "/api/v1/auth/me", json: bad, bearer: s.accessToken)
                #expect(r.status == .badRequest && r.errorCode == "INVALID_REQUEST", "\(bad)")
            }
            let cleared = try await client.send(.patch, "/api/v1/auth/me", raw: #"{"user_metadata":null}"#, bearer: s.accessToken)
            #expect(cleared.status == .ok && (cleared.json["user_metadata"] as? [String: Any])?.isEmpty == true)
        }
    }

    @Test func appMetadataRidesInTokensAndARefreshCarriesTheNewValue() async throws {
        let h = try await TestHarness.make(config: #"{"mail":{"transport":"outbox"},"tokens":{"claims":["email","email_verified"]}}"#)
        let s = try await h.signIn(email: "ada@example.com")
        #expect(APIKeyTests.claims(s.accessToken)["app_metadata"] == nil, "absent while empty")
        #expect(APIKeyTests.claims(s.accessToken)["email"] as? String == "ada@example.com")
        #expect(APIKeyTests.claims(s.accessToken)["email_verified"] as? Bool == true)
        let userID = try #require(UUID(uuidString: s.user.id))
        _ = try await h.kernel.users.update(userID) { $0.appMetadata = ["couple_id": .string("c-42")] }
        let refreshed = try await h.kernel.sessions.refresh(s.refreshToken)
        #expect((APIKeyTests.claims(refreshed.accessToken)["app_metadata"] as? [String: Any])?["couple_id"] as? String == "c-42")
        #expect(refreshed.user.appMetadata == ["couple_id": .string("c-42")])
        await h.server.close()
    }

    @Test func tokensClaimsAcceptsOnlyTheContractsNames() throws {
        #expect(throws: ConfigError.self) {
            _ = try AuthConfig.parse(Data(#"{"tokens":{"claims":["email","role"]}}"#.utf8), host: "127.0.0.1", port: 0, availableProviders: [], defaultProviders: [])
        }
    }

    @Test func metadataSurvivesTheJournalAndTheDatabaseForms() throws {
        var user = UserRecord(email: "ada@example.com", createdAt: Date(timeIntervalSince1970: 1_700_000_000))
        user.userMetadata = ["theme": .string("dark"), "nested": .object(["a": .array([.number(1), .bool(true), .null])])]
        user.appMetadata = ["couple_id": .string("c-42")]
        var w = JSONWriter(capacity: 256)
        try StoreChange.putUser(user).write(to: &w, fallback: JSONEncoder())
        let read = w.bytes.withUnsafeBufferPointer { StoreChange.fastDecode($0) }
        guard case .putUser(let back)? = read else { Issue.record("the journal line did not read back"); return }
        #expect(back == user, "the hand-written journal form reads back")
        let decoded = try JSONDecoder().decode(UserRecord.self, from: try JSONEncoder().encode(user))
        #expect(decoded == user, "the Codable form (PostgreSQL's record column) reads back")
    }
}
