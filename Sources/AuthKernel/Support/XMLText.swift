/// Text made safe for an element or an attribute of HTML, SVG or XML that authd writes itself
/// (a drawn chart, a QR code's title): its five special characters escaped.
package enum XMLText {
    package static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
