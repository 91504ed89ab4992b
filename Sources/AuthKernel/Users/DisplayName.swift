import Foundation

/// The rules for `display_name`: at most 100 characters (Unicode code points, as sent), trimmed, no
/// control characters; blank means none.
public enum DisplayName {
    /// Longest display name, in Unicode code points.
    public static let maxLength = 100

    /// Returns the cleaned name (nil for none).
    /// - Throws: 400 `INVALID_REQUEST` naming `display_name`.
    public static func validate(_ value: String?) throws(AuthError) -> String? {
        try ShortLabel.clean(value, field: "display_name", maxLength: maxLength)
    }
}
