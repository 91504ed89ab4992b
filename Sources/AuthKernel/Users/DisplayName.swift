import Foundation

/// The rules for `display_name`: trimmed, at most 100 characters, no control characters; blank means none.
public enum DisplayName {
    /// Longest display name, in characters.
    public static let maxLength = 100

    /// Returns the cleaned name (nil for none).
    /// - Throws: 400 `INVALID_REQUEST` naming `display_name`.
    public static func validate(_ value: String?) throws(AuthError) -> String? {
        guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        guard trimmed.count <= maxLength else {
            throw AuthError.invalidRequest("The field `display_name` must be at most \(maxLength) characters.", field: "display_name")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthError.invalidRequest("The field `display_name` must not contain control characters.", field: "display_name")
        }
        return trimmed
    }
}
