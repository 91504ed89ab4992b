/// The rule for user names (`username`): 3 to 32 ASCII letters, digits, `_`, `.` and `-`, unique
/// ignoring case. ASCII only, so two names cannot look alike.
public enum Username {
    /// Whether `name` is a possible user name.
    public static func isValid(_ name: String) -> Bool {
        (3...32).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D
            }
    }
}
