import Foundation

/// The rules for a user's `groups` (contract §17): at most 50 names of 1 to 64 characters from
/// `a-z`, `0-9`, `_`, `.` and `-`; kept sorted, without repeats.
package enum UserGroups {
    /// The most groups one user may be in.
    package static let maxCount = 50
    /// The longest group name.
    package static let maxLength = 64

    /// Whether `name` is a group name.
    package static func isValid(_ name: String) -> Bool {
        (1...maxLength).contains(name.utf8.count)
            && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D }
    }

    /// The groups, sorted and without repeats.
    /// - Throws: 400 `INVALID_REQUEST` naming `field` for a bad name or more than ``maxCount``.
    package static func validate(_ names: [String], field: String = "groups") throws(AuthError) -> [String] {
        if let bad = names.first(where: { !isValid($0) }) {
            throw AuthError.invalidRequest(
                "`\(LogSafe.text(bad, maxLength: 80))` is not a group name: 1 to \(maxLength) of a-z, 0-9, _, . and -.", field: field)
        }
        let groups = Array(Set(names)).sorted()
        guard groups.count <= maxCount else { throw AuthError.invalidRequest("A user may be in at most \(maxCount) groups.", field: field) }
        return groups
    }
}
