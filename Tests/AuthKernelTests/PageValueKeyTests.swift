@testable import AuthKernel
import Testing

/// The rendering cache's keys: one key per distinct step, whatever order its values came in.
struct PageValueKeyTests {
    func key(_ values: [String: PageValue]) -> String {
        var key = ""
        PageValue.appendKey(values, to: &key)
        return key
    }

    @Test func equalValuesShareAKeyAndDifferentOnesNever() {
        var a: [String: PageValue] = [:], b: [String: PageValue] = [:]
        for i in 0..<20 { a["k\(i)"] = .text("v\(i)") }
        for i in (0..<20).reversed() { b["k\(i)"] = .text("v\(i)") }
        #expect(key(a) == key(b))
        // Values whose plain joining would read alike.
        let lookalikes: [[String: PageValue]] = [
            ["a": "b=c"], ["a=b": "c"], ["a": "b", "c": ""], ["a": .flag(true)], ["a": "T"], ["a": .flag(false)],
            ["a": .list([])], ["a": .list([["b": "c"]])], ["a": .list([["b": "c"], [:]])], ["a": .list([["b": "c]"]])], ["a": ""], [:],
        ]
        #expect(Set(lookalikes.map(key)).count == lookalikes.count)
    }
}
