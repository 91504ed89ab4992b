import Foundation

/// The rule shared by short free-text labels a client sends (`display_name`, `device_name`, `platform`):
/// at most `maxLength` Unicode code points as sent, then trimmed, no control characters; blank means none.
///
/// Length counts code points of the value as sent, the way JSON Schema's `maxLength` (and so
/// `/openapi.yaml`) counts. Counting characters (grapheme clusters) after trimming, as before, let a
/// value the schema refuses through, and one "character" can carry any number of combining marks
/// into the store.
enum ShortLabel {
    /// Returns the cleaned label (nil for absent or blank).
    /// - Throws: 400 `INVALID_REQUEST` naming `field`.
    static func clean(_ value: String?, field: String, maxLength: Int) throws(AuthError) -> String? {
        guard let value else { return nil }
        guard value.unicodeScalars.count <= maxLength else {
            throw AuthError.invalidRequest("The field `\(field)` must be at most \(maxLength) characters (Unicode code points).", field: field)
        }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        guard !trimmed.unicodeScalars.contains(where: isRefused) else {
            throw AuthError.invalidRequest("The field `\(field)` must not contain control characters.", field: field)
        }
        return trimmed
    }

    /// Control characters, line and paragraph separators, bidirectional overrides and isolates
    /// (a device name shown in another person's approval prompt or mail could otherwise reorder the
    /// text around it), private-use and unassigned code points. Joiners and variation selectors,
    /// which emoji need, stay allowed.
    static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: return true
        default: break
        }
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
