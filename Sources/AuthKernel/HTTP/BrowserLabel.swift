import Foundation

/// A browser and its system named from a `User-Agent` header, as a person recognises them on their
/// account page: "Firefox on Windows", "Safari on iPhone". Only the common names are told apart;
/// anything else is nil, never the raw header (it is the sender's to write).
package enum BrowserLabel {
    /// Longest header read: a real one is a few hundred bytes.
    static let maxLength = 512

    package static func label(_ userAgent: String?) -> String? {
        guard let userAgent, !userAgent.isEmpty else { return nil }
        let ua = String(userAgent.utf8.prefix(maxLength)) ?? ""
        let browser = Self.browser(ua), system = Self.system(ua)
        switch (browser, system) {
        case (let b?, let s?): return "\(b) on \(s)"
        case (let b?, nil): return b
        case (nil, let s?): return "A browser on \(s)"
        default: return nil
        }
    }

    static let browsers: Set = ["Edge", "Opera", "Samsung Internet", "Firefox", "Chromium", "Chrome", "Safari", "curl"]
    static let systems: Set = ["iPhone", "iPad", "Android", "Windows", "ChromeOS", "macOS", "Linux"]

    /// A label this type made (kept in English with a session when it signed in) in the page's
    /// language: "Chromium unter Linux". Any other text is a name someone chose, shown as it is.
    package static func worded(_ label: String, messages: Messages) -> String {
        let parts = label.components(separatedBy: " on ")
        guard parts.count == 2, systems.contains(parts[1]) else { return label }
        if parts[0] == "A browser" { return messages.text("kernel.browser.a_browser_on", ["system": parts[1]]) }
        guard browsers.contains(parts[0]) else { return label }
        return messages.text("kernel.browser.on", ["browser": parts[0], "system": parts[1]])
    }

    static func browser(_ ua: String) -> String? {
        if ua.contains("Edg/") || ua.contains("EdgA/") || ua.contains("EdgiOS/") { return "Edge" }
        if ua.contains("OPR/") { return "Opera" }
        if ua.contains("SamsungBrowser/") { return "Samsung Internet" }
        if ua.contains("Firefox/") || ua.contains("FxiOS/") { return "Firefox" }
        if ua.contains("HeadlessChrome/") || ua.contains("Chromium/") { return "Chromium" }
        if ua.contains("Chrome/") || ua.contains("CriOS/") { return "Chrome" }
        if ua.contains("Safari/") && ua.contains("Version/") { return "Safari" }
        if ua.hasPrefix("curl/") { return "curl" }
        return nil
    }

    static func system(_ ua: String) -> String? {
        if ua.contains("iPhone") { return "iPhone" }
        if ua.contains("iPad") { return "iPad" }
        if ua.contains("Android") { return "Android" }
        if ua.contains("Windows") { return "Windows" }
        if ua.contains("CrOS") { return "ChromeOS" }
        if ua.contains("Macintosh") || ua.contains("Mac OS X") { return "macOS" }
        if ua.contains("Linux") || ua.contains("X11") { return "Linux" }
        return nil
    }
}
