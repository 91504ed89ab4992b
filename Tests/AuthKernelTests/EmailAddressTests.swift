import AuthKernel
import Testing

struct EmailAddressTests {
    @Test(arguments: ["a@b.co", "Anna.Smith+tag@Example.COM", "x_y-z@sub.domain.org", "o'brien@xn--bcher-kva.de"])
    func accepts(_ raw: String) {
        #expect(EmailAddress(raw)?.value == raw.lowercased())
    }

    @Test(arguments: [
        "", "plain", "@b.co", "a@", "a@b", "a@@b.co", "a b@c.de", "a@b..co", ".a@b.co", "a.@b.co", "a..b@c.de",
        "a@-b.co", "a@b-.co", "a@b.c", "a@1.23", "a\r\nBcc: x@y.z@b.co", "\"q\"@b.co", "a@[127.0.0.1]",
        String(repeating: "a", count: 65) + "@b.co", "a@" + String(repeating: "b", count: 250) + ".co",
        // What `/openapi.yaml`'s EmailAddress pattern refuses: non-ASCII (the Kelvin sign lower-cases
        // to "k"), a last label not starting with a letter, white space other than spaces and tabs.
        "\u{212A}ate@b.co", "ann\u{E9}@b.co", "a@b.1co", "a@b.c1.2d", "\u{3000}a@b.co", "a@b.co\n", "a@b.co\u{A0}",
    ])
    func refuses(_ raw: String) {
        #expect(EmailAddress(raw) == nil)
    }

    @Test func theLengthLimitCountsTheAddressAsSentBeforeTrimming() {
        let longest = String(repeating: "a", count: 64) + "@" + String(repeating: "b", count: 63) + "." + String(repeating: "c", count: 63)
            + "." + String(repeating: "d", count: 54) + ".co"
        #expect(longest.count == 250 && EmailAddress(longest)?.value == longest)
        #expect(EmailAddress("  " + longest + "  ")?.value == longest)
        // 256 code points as sent: the schema's `maxLength: 254` refuses it, so the server must too.
        #expect(EmailAddress("   " + longest + "   ") == nil)
    }

    @Test func trimsSurroundingSpacesAndTabs() {
        #expect(EmailAddress("  a@b.co ")?.value == "a@b.co")
        #expect(EmailAddress("\ta@b.co\t ")?.value == "a@b.co")
        #expect(EmailAddress("a@b.c1")?.value == "a@b.c1")
    }
}
