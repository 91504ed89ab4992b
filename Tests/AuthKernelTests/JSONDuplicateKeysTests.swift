@testable import AuthKernel
import Testing

struct JSONDuplicateKeysTests {
    func first(_ json: String) -> String? { JSONDuplicateKeys.first(in: Array(json.utf8)) }

    @Test func findsDuplicatesAtAnyDepthAndAfterUnescaping() {
        #expect(first(#"{"a":1,"a":2}"#) == "a")
        #expect(first(#"{"x":{"b":1,"c":[{"d":1},{"d":2,"d":3}]}}"#) == "d")
        #expect(first(#"{"a":1,"\u0061":2}"#) == "a")
        #expect(first(#"{"k\"ey":1,"k\"ey":2}"#) == #"k"ey"#)
    }

    @Test func leavesValidBodiesAlone() {
        #expect(first(#"{"a":"a","b":"a"}"#) == nil)  // equal values are fine
        #expect(first(#"[{"a":1},{"a":2}]"#) == nil)  // the same key in sibling objects is fine
        #expect(first(#"{"a":{"a":{"a":1}}}"#) == nil)  // and in nested ones
        #expect(first(#"{"a":"}\",{\"a\":1"}"#) == nil)  // braces and quotes inside strings
        #expect(first(#"{}"#) == nil)
    }
}
