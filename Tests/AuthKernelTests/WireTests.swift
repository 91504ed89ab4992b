import AuthdCore
import AuthdServer
import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Testing

/// Contract §5's friendlier wire: camelCase spellings, logout by refresh token.
struct WireTests {
    @Test func snakeCaseOfTheSpellingsAppsSend() {
        #expect(CamelCaseKeys.snakeCase("deviceName") == "device_name")
        #expect(CamelCaseKeys.snakeCase("newPassword") == "new_password")
        #expect(CamelCaseKeys.snakeCase("requestId") == "request_id")
        #expect(CamelCaseKeys.snakeCase("requestID") == "request_id")
        #expect(CamelCaseKeys.snakeCase("APIKey") == "api_key")
        #expect(CamelCaseKeys.snakeCase("totp2Code") == "totp2_code")
        #expect(CamelCaseKeys.snakeCase("device_name") == nil && CamelCaseKeys.snakeCase("email") == nil)
        #expect(CamelCaseKeys.snakeCase("weird-Key") == nil, "not an identifier: left alone")
    }

    static func normalise(_ text: String) throws -> String? {
        try Array(text.utf8).withUnsafeBytes { try CamelCaseKeys.normalise($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func onlyTopLevelKeysAreRenamedAndValuesPassThroughByteForByte() throws {
        #expect(try Self.normalise(#"{"email":"a@b.c","code":"1"}"#) == nil, "nothing to rename: the body as it was")
        #expect(try Self.normalise(#" { "deviceName" : "Ada's \"Phone\"" , "n": [1, {"x}": "]"}] } "#) == #"{"device_name":"Ada's \"Phone\"","n":[1, {"x}": "]"}]}"#)
        #expect(try Self.normalise(#"{"userMetadata":{"fooBar":{"bazQux":1}}}"#) == #"{"user_metadata":{"fooBar":{"bazQux":1}}}"#)
        #expect(try Self.normalise(#"{"deviceName":"a","device_name":"a"}"#) == #"{"device_name":"a"}"#, "the same value twice is one field")
        #expect(throws: AuthError.self) { _ = try Self.normalise(#"{"deviceName":"a","device_name":"b"}"#) }
        #expect(try Self.normalise(#"{"full_name":{"a":1},"fullName":null}"#) == #"{"full_name":{"a":1}}"#, "null is no value")
        #expect(try Self.normalise(#"{"full_name":null,"fullName":{"a":1}}"#) == #"{"full_name":{"a":1}}"#)
        for notAnObject in [#"["deviceName"]"#, #"{"deviceName":}"#, #"{"deviceName":"a""#, ""] {
            #expect(try Self.normalise(notAnObject) == nil, "\(notAnObject): left for the decoder to refuse")
        }
        #expect(try Self.normalise(#"{"a\u0042":1}"#) == #"{"a_b":1}"#, "an escaped key is read as the decoder reads it (contract §12)")
    }

    @Test func camelCaseBodiesWorkOnKernelEndpoints() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            let patched = try await client.send(.patch, "/api/v1/auth/me", json: ["displayName": "Ada", "userMetadata": ["fooBar": 1]], bearer: s.accessToken)
            #expect(patched.status == .ok && patched.json["display_name"] as? String == "Ada")
            #expect((patched.json["user_metadata"] as? [String: Any])?["fooBar"] as? Int == 1, "nested keys are the app's own")
            let conflict = try await client.send(.patch, "/api/v1/auth/me", json: ["displayName": "Ada", "display_name": "Eve"], bearer: s.accessToken)
            #expect(conflict.status == .badRequest && conflict.errorCode == "INVALID_REQUEST")
            let forged = try await client.send(.patch, "/api/v1/auth/me", json: ["appMetadata": ["role": "admin"]], bearer: s.accessToken)
            #expect(forged.status == .badRequest, "the camelCase spelling of a forbidden field is as forbidden")
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", json: ["refreshToken": s.refreshToken])
            #expect(refreshed.status == .ok && refreshed.accessToken != nil)
        }
    }

    @Test func logoutByRefreshTokenWithoutABearer() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "ada@example.com")
        let other = try await h.signIn(email: "ada@example.com")
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/logout", json: ["refresh_token": s.refreshToken]).status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).status == .unauthorized, "the session ended")
            let again = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": s.refreshToken])
            #expect(again.status == .unauthorized)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: other.accessToken).status == .ok, "only that session")
            for unknown in ["not-a-token", String(repeating: "x", count: 300)] {
                #expect(try await client.send(.post, "/api/v1/auth/logout", json: ["refresh_token": unknown]).status == .noContent)
            }
            #expect(try await client.send(.post, "/api/v1/auth/logout", json: ["refreshToken": other.refreshToken]).status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: other.accessToken).status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/logout").status == .unauthorized, "nothing names a session")
            let wrong = try await client.send(.post, "/api/v1/auth/logout", json: ["token": "x"])
            #expect(wrong.status == .badRequest && wrong.errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: "forged").status == .unauthorized)
            let third = try await h.signIn(email: "ada@example.com")
            // With a Bearer the body does not matter (contract §12): clients that always send one can log out.
            let malformed = try await client.send(.post, "/api/v1/auth/logout", raw: #"{"refresh_token":5}"#, bearer: third.accessToken)
            #expect(malformed.status == .noContent)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: third.accessToken).status == .unauthorized, "the Bearer's session ended")
        }
    }
}
