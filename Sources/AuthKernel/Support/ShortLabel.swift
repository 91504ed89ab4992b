import Foundation

/// The rule shared by short free-text labels a client sends (`display_name`, `device_name`, `platform`):
/// at most `maxLength` Unicode code points as sent; white space around it trimmed; then no refused
/// character (control, separator, bidirectional or private-use characters); blank means none. This is exactly the `Label` schema of
/// `/openapi.yaml` (whose `maxLength` also counts code points as sent, and whose pattern allows
/// white space, newlines included, only at either end), so a client that validates against the
/// schema is never surprised.
public enum ShortLabel {
    /// Returns the cleaned label (nil for absent or blank).
    /// - Throws: 400 `INVALID_REQUEST` naming `field`.
    public static func clean(_ value: String?, field: String, maxLength: Int) throws(AuthError) -> String? {
        guard let value else { return nil }
        guard value.unicodeScalars.count <= maxLength else {
            throw AuthError.invalidRequest("The field `\(field)` must be at most \(maxLength) characters (Unicode code points).", field: field)
        }
        let scalars = value.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return nil }
        let trimmed = scalars[first...last]
        guard !trimmed.contains(where: isRefused) else {
            throw AuthError.invalidRequest("The field `\(field)` must not contain control characters.", field: field)
        }
        return String(trimmed)
    }

    /// White space trimmed from either end: Unicode's separators (Zs, Zl, Zp), tab to carriage
    /// return, and next line (the set Foundation's `whitespacesAndNewlines` names), spelled out so
    /// that the schema's pattern can list the same.
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// Control characters, line and paragraph separators, bidirectional marks, overrides and
    /// isolates (a device name shown in another person's approval prompt or mail could otherwise
    /// reorder the text around it), and private-use code points. Joiners and variation selectors,
    /// which emoji need, stay allowed.
    static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069,
            0xE000...0xF8FF, 0xF0000...0x10FFFF:
            return true
        default: return false
        }
    }
}
