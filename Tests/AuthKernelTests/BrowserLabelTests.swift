@testable import AuthKernel
import Testing

/// How `/account` names a browser's session and a request from its User-Agent (contract §18): the
/// common browsers and systems by name, anything else not at all, never the header itself.
struct BrowserLabelTests {
    @Test(arguments: [
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox on Windows"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "Safari on iPhone"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", "Chrome on macOS"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0", "Edge on Windows"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", "Chrome on Android"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36", "Chromium on Linux"),
        ("curl/8.5.0", "curl"),
        ("Mozilla/5.0 (X11; Linux x86_64) SomethingNew/1.0", "A browser on Linux"),
    ])
    func theCommonBrowsersAndSystemsAreNamed(userAgent: String, label: String) {
        #expect(BrowserLabel.label(userAgent) == label)
    }

    @Test func anythingElseIsNoNameAndNeverTheHeader() {
        #expect(BrowserLabel.label(nil) == nil && BrowserLabel.label("") == nil)
        #expect(BrowserLabel.label("<script>alert(1)</script>") == nil)
        // Only the first 512 bytes are read: a name past them is not looked for.
        #expect(BrowserLabel.label(String(repeating: "x", count: 600) + " Firefox/1 Windows") == nil)
    }

    @Test func aLabelItMadeIsWordedInThePagesLanguageAndANameSomeoneChoseIsNot() {
        let messages = Messages(folder: nil)
        RequestLanguage.$current.withValue(RequestLanguage(fixed: "de")) {
            #expect(BrowserLabel.worded("Firefox on Windows", messages: messages) == "Firefox unter Windows")
            #expect(BrowserLabel.worded("A browser on Linux", messages: messages) == "Ein Browser unter Linux")
            #expect(BrowserLabel.worded("Grandma's iPad on Windows", messages: messages) == "Grandma's iPad on Windows")
            #expect(BrowserLabel.worded("Firefox on the kitchen shelf", messages: messages) == "Firefox on the kitchen shelf")
        }
        #expect(BrowserLabel.worded("Safari on iPhone", messages: messages) == "Safari on iPhone")
    }
}
