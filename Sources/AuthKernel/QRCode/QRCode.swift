/// A QR code (ISO/IEC 18004, Model 2) of a text, made on the server: byte mode (the text's UTF-8),
/// the smallest of the 40 versions that holds it at the chosen error correction, and the mask the
/// standard's penalty rules prefer. A page shows it with ``svg(title:)``; an app scans it.
///
/// ```swift
/// let code = try QRCode("otpauth://totp/authd:anna%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=authd")
/// let markup = code.svg(title: "QR code of the key for your authenticator app")
/// ```
public struct QRCode: Sendable, Equatable {
    /// How much of a symbol can be lost (dirt, a glare, a logo) and the text still read: more
    /// correction, a larger symbol for the same text.
    public enum Correction: Sendable, Hashable, CaseIterable {
        /// About 7 % of the codewords can be restored.
        case low
        /// About 15 %: what most generators use.
        case medium
        /// About 25 %.
        case quartile
        /// About 30 %.
        case high
    }

    /// The error a text too long for a version 40 symbol throws.
    public struct TooLong: Error, Equatable {
        /// The text's length in bytes (UTF-8).
        public let bytes: Int
        /// The most bytes a version 40 symbol holds at the chosen correction.
        public let capacity: Int
    }

    /// The version, 1 through 40: the symbol has 17 + 4 × version modules a side.
    public let version: Int
    /// The error correction it was made with.
    public let correction: Correction
    /// The mask pattern applied to its data, 0 through 7 (the standard's numbering).
    public let mask: Int
    /// Modules a side, without the quiet zone.
    public let size: Int
    /// Row by row, `true` for a dark module.
    private let modules: [Bool]

    /// The QR code of `text` in byte mode (UTF-8). `mask` forces a mask pattern (0 through 7)
    /// instead of the one with the least penalty; a reader decodes either.
    public init(_ text: String, correction: Correction = .medium, mask: Int? = nil) throws(TooLong) {
        try self.init(bytes: Array(text.utf8), correction: correction, mask: mask)
    }

    /// The QR code of `bytes` in byte mode. `mask` forces a mask pattern (0 through 7).
    public init(bytes: [UInt8], correction: Correction = .medium, mask: Int? = nil) throws(TooLong) {
        precondition(mask.map { (0...7).contains($0) } ?? true, "a QR code's mask is 0 through 7")
        guard let version = (1...40).first(where: { QRCode.capacity(version: $0, correction: correction) >= bytes.count }) else {
            throw TooLong(bytes: bytes.count, capacity: QRCode.capacity(version: 40, correction: correction))
        }
        let codewords = QRCodeLayout.codewords(QRCode.dataCodewords(bytes, version: version, correction: correction), version: version, correction: correction)
        let symbol = QRCodeSymbol.make(version: version, correction: correction, codewords: codewords, mask: mask)
        self.version = version
        self.correction = correction
        self.mask = symbol.mask
        self.size = symbol.size
        self.modules = symbol.dark
    }

    /// Whether the module in column `x` and row `y` (from the top left, 0-based) is dark; a
    /// module outside the symbol (the quiet zone) is light.
    public subscript(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    /// The most bytes a symbol of `version` (1 through 40) holds at `correction` in byte mode.
    public static func capacity(version: Int, correction: Correction) -> Int {
        precondition((1...40).contains(version), "a QR code's version is 1 through 40")
        let bits = QRCodeLayout.dataCodewordCount(version: version, correction: correction) * 8
        return (bits - 4 - countBits(version)) / 8
    }

    /// The length field of byte mode: 8 bits up to version 9, 16 from version 10.
    static func countBits(_ version: Int) -> Int { version <= 9 ? 8 : 16 }

    /// The data codewords: the byte mode indicator, the length, the bytes, the terminator, then
    /// the two pad codewords in turn up to the version's data capacity.
    static func dataCodewords(_ bytes: [UInt8], version: Int, correction: Correction) -> [UInt8] {
        let capacity = QRCodeLayout.dataCodewordCount(version: version, correction: correction)
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: countBits(version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count < capacity {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }
}

/// Bits appended most significant first, read back as bytes.
struct BitBuffer {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: Int, count width: Int) {
        for shift in stride(from: width - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}
