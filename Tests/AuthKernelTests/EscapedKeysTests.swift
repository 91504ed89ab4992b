import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Testing

/// Contract §12 "Both spellings, exactly": keys are compared after JSON unescaping, so an escaped
/// key can neither hide one spelling of a field nor switch the both-spellings check off.
struct EscapedKeysTests {
    static func normalise(_ text: String) throws -> String? {
        try Array(text.utf8).withUnsafeBytes { try CamelCaseKeys.normalise($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func stringsReadAsAJSONParserReadsThem() {
        let decode = { (text: String) in JSONStringLiteral.decode(Array(text.utf8)) }
        #expect(decode(#"x\u0041"#) == "xA")
        #expect(decode(#"display\u005fname"#) == "display_name")
        #expect(decode(#"\"\\\/\b\f\n\r\t"#) == "\"\\/\u{8}\u{C}\n\r\t")
        #expect(decode(#"caf\u00E9 \ud83d\ude00"#) == "café 😀")
        #expect(decode("plain é") == "plain é")
        for malformed in [#"\ud800"#, #"\ude00x"#, #"\u12"#, #"\u12g4"#, #"\x"#, "a\\", "tab\there", #"\ud83d\u0041"#] {
            #expect(decode(malformed) == nil, "\(malformed)")
        }
        #expect(JSONStringLiteral.decode([0x61, 0xFF]) == nil, "not UTF-8")
    }

    /// Finding 10 of the second review: an escaped key anywhere made the check skip the whole body.
    @Test func anEscapedKeyNoLongerSwitchesTheCheckOff() throws {
        for conflicting in [
            #"{"display_name":"Alice","displayName":"Mallory","x\u0041":1}"#,
            #"{"display\u005fname":"Alice","displayName":"Mallory"}"#,
            #"{"display_name":"Alice","display\u004eame":"Mallory"}"#,
            #"{"displ\u0061y\u004eame":"Mallory","display\u005Fname":"Alice"}"#,
        ] {
            #expect(throws: AuthError.self, "\(conflicting)") { _ = try Self.normalise(conflicting) }
        }
        #expect(try Self.normalise(#"{"device\u004eame":"a","x\u0041":1}"#) == #"{"device_name":"a","x_a":1}"#)
        #expect(try Self.normalise(#"{"a\"b":1,"deviceName":"x"}"#) == #"{"a\"b":1,"device_name":"x"}"#, "a key not renamed keeps its escapes")
        #expect(try Self.normalise(#"{"display\u005fname":"A","displayName":"A"}"#) == #"{"display_name":"A"}"#, "the same value twice is one field")
        #expect(try Self.normalise(#"{"display\u005fname":"A","x":1}"#) == nil, "nothing to rename")
        #expect(throws: AuthError.self, "a key that is not a JSON string cannot hide a spelling") {
            _ = try Self.normalise(#"{"display_name":"Alice","displayName":"Mallory","x\ud800":1}"#)
        }
    }

    @Test func theCheckHoldsOverHTTPWhateverTheKeysEscapes() async throws {
        let h = try await TestHarness.make()
        let s = try await h.signIn(email: "alice@example.com")
        try await h.test { client async throws in
            for conflicting in [
                #"{"display_name":"Alice","displayName":"Mallory","x\u0041":1}"#,
                #"{"display\u005fname":"Alice","displayName":"Mallory"}"#,
                #"{"display_name":"Alice","display\u004eame":"Mallory"}"#,
                #"{"display_name":"Alice","display\u005fname":"Mallory"}"#,
            ] {
                let r = try await client.send(.patch, "/api/v1/auth/me", raw: conflicting, bearer: s.accessToken)
                #expect(r.status == .badRequest && r.errorCode == "INVALID_REQUEST", "\(conflicting): \(r.status)")
            }
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: s.accessToken).json["display_name"] is NSNull, "nothing changed")
            let escaped = try await client.send(.patch, "/api/v1/auth/me", raw: #"{"display\u004eame":"Alice","x\u0041":1}"#, bearer: s.accessToken)
            #expect(escaped.status == .ok && escaped.json["display_name"] as? String == "Alice", "an escaped spelling is that spelling")
            let snake = try await client.send(.patch, "/api/v1/auth/me", raw: #"{"display\u005fname":"Bob","y\u0042":2}"#, bearer: s.accessToken)
            #expect(snake.status == .ok && snake.json["display_name"] as? String == "Bob")
        }
    }
}
