/// The shapes the pin provider accepts for PINs and user names.
enum PINFormat {
    /// 4 to 8 ASCII digits.
    static func isValidPIN(_ pin: String) -> Bool {
        (4...8).contains(pin.utf8.count) && pin.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// 3 to 32 ASCII letters, digits, `_`, `.`, `-`. ASCII only, so two names cannot look alike.
    static func isValidUsername(_ name: String) -> Bool {
        (3...32).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D
            }
    }
}
