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
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthError.invalidRequest("The field `\(field)` must not contain control characters.", field: field)
        }
        return trimmed
    }
}
