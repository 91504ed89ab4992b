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
