/// The shape the pin provider accepts for PINs.
enum PINFormat {
    /// 4 to 8 ASCII digits.
    static func isValidPIN(_ pin: String) -> Bool {
        (4...8).contains(pin.utf8.count) && pin.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
