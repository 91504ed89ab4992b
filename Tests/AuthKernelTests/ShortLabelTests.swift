import AuthKernel
import Testing

/// `display_name`, `device_name` and `platform` share one rule; these pin its edges directly.
struct ShortLabelTests {
    @Test func labelsAreTrimmedAndBlankMeansNone() throws {
        let info = try DeviceInfo(name: "  Anna's iPhone \n", platform: "   ")
        #expect(info.name == "Anna's iPhone" && info.platform == nil)
        #expect(try DisplayName.validate(nil) == nil)
        #expect(try DisplayName.validate(" \t ") == nil)
    }

    @Test func lengthCountsCodePointsAsSent() throws {
        let hundred = String(repeating: "e\u{0301}", count: 50)  // 50 characters, 100 code points
        #expect(try DisplayName.validate(hundred) == hundred)
        #expect(try DeviceInfo(name: hundred, platform: hundred).platform == hundred)
        for tooLong in [hundred + "x", " " + String(repeating: "x", count: 100), "Z" + String(repeating: "\u{0301}", count: 1000)] {
            #expect(throws: AuthError.self) { try DisplayName.validate(tooLong) }
            #expect(throws: AuthError.self) { try DeviceInfo(name: tooLong, platform: nil) }
            #expect(throws: AuthError.self) { try DeviceInfo(name: nil, platform: tooLong) }
        }
    }

    /// The rule is `/openapi.yaml`'s `Label` pattern: white space (newlines too) only at the ends.
    @Test func whiteSpaceOfEveryKindIsTrimmedAtTheEnds() throws {
        #expect(try DisplayName.validate("\u{3000}\u{A0}Anna\u{2028}\r\n\u{85}") == "Anna")
        #expect(try DisplayName.validate("\n\u{2029}") == nil)
        #expect(try DisplayName.validate("Anna Lena") == "Anna Lena")
    }

    @Test func controlCharactersAreRefused() {
        for bad in ["a\u{7}b", "a\nb", "a\u{2028}b", "a\u{202E}b", "a\u{E000}", "\u{F0001}", "a\u{85}b"] {
            #expect(throws: AuthError.self) { try DisplayName.validate(bad) }
            #expect(throws: AuthError.self) { try DeviceInfo(name: bad, platform: nil) }
        }
    }
}
