/// Makes a value an attacker chose safe to put in a log line or an audit record: control
/// characters (a newline would start a forged line), line and paragraph separators and bidi
/// controls are written as `\n`, `\u{2028}` and the like, and the text is cut to a bounded length.
///
/// ```swift
/// logger.info("token refused", metadata: ["alg": "\(LogSafe.text(header.alg))"])
/// ```
public enum LogSafe {
    /// The value escaped and cut to at most `maxLength` Unicode scalars (an ellipsis marks a cut).
    public static func text(_ value: some StringProtocol, maxLength: Int = 200) -> String {
        var out = ""
        var count = 0
        for scalar in value.unicodeScalars {
            if count >= maxLength {
                out += "…"
                break
            }
            count += 1
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if needsEscape(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// Whether `text` would be changed by ``text(_:maxLength:)`` apart from cutting.
    public static func isPlain(_ value: some StringProtocol) -> Bool {
        !value.unicodeScalars.contains(where: needsEscape)
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return true
        default: break
        }
        // Bidirectional marks, overrides and isolates reorder what a reader sees; joiners and
        // variation selectors, which emoji need, are left alone.
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: return true
        default: return false
        }
    }
}
