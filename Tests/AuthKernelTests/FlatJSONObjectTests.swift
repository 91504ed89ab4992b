import AuthKernel
import Foundation
import Testing

/// The fast reader of simple bodies must agree with JSONDecoder on what it accepts, and leave
/// everything else (with its error messages) to the usual path.
struct FlatJSONObjectTests {
    @Test(arguments: [
        #"{"refresh_token":"abc-_123"}"#,
        " {\n\t\"refresh_token\" : \"abc\" , \"device_name\":\"My phone (2)\"}\r\n ",
        #"{}"#,
        #"{"a":"","b":"x y/z"}"#,
    ])
    func acceptsPlainStringObjectsAsJSONDecoderReadsThem(_ body: String) throws {
        let flat = try #require(FlatJSONObject(Array(body.utf8)))
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(body.utf8))
        #expect(Dictionary(uniqueKeysWithValues: flat.fields.map { ($0.key, $0.value) }) == decoded)
    }

    @Test(arguments: [
        "", "{", "}", "[]", "null", #""refresh_token""#,
        #"{"refresh_token":"a\u0062c"}"#,  // an escape
        #"{"refresh_token":"a\"b"}"#,
        "{\"refresh_token\":\"Zoë\"}",  // not ASCII
        "{\"refresh_token\":\"a\u{1}b\"}",  // a control character
        #"{"refresh_token":1}"#, #"{"refresh_token":null}"#, #"{"refresh_token":["a"]}"#, #"{"refresh_token":{"a":"b"}}"#,
        #"{"refresh_token":"a","refresh_token":"b"}"#,  // a key twice: the usual path names it
        #"{"refresh_token":"a"} x"#, #"{"refresh_token":"a"}{}"#, #"{"refresh_token":"a",}"#, #"{"refresh_token" "a"}"#,
        #"{refresh_token:"a"}"#,
    ])
    func leavesEverythingElseToTheUsualPath(_ body: String) {
        #expect(FlatJSONObject(Array(body.utf8)) == nil)
    }

    @Test func looksUpFields() throws {
        let flat = try #require(FlatJSONObject(Array(#"{"a":"1","b":"2"}"#.utf8)))
        #expect(flat["b"] == "2")
        #expect(flat["c"] == nil)
    }
}
