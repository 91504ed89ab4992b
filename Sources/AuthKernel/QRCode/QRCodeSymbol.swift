/// A symbol's module matrix being drawn: the function patterns (finders and their separators,
/// timing, alignment, the dark module), format and version information, the codewords placed in
/// the two-column zigzag, and the mask with the least penalty.
struct QRCodeSymbol {
    let size: Int
    /// Row by row, `true` for dark.
    var dark: [Bool]
    /// The modules of function patterns and format and version information: never data, never masked.
    private(set) var reserved: [Bool]
    private(set) var mask = 0

    /// The function patterns of `version` drawn, format and version information reserved.
    init(version: Int) {
        size = 17 + 4 * version
        dark = [Bool](repeating: false, count: size * size)
        reserved = dark
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        for (x, y) in [(0, 0), (size - 7, 0), (0, size - 7)] { drawFinder(x, y) }
        let centres = Self.alignmentCentres(version: version)
        for cx in centres {
            for cy in centres {
                let nearFinder = (cx == 6 && cy == 6) || (cx == 6 && cy == centres.last!) || (cx == centres.last! && cy == 6)
                if !nearFinder { drawAlignment(cx, cy) }
            }
        }
        // Format information, written once the mask is chosen, and the dark module beside it.
        for i in 0...8 where i != 6 {
            set(8, i, false)
            set(i, 8, false)
        }
        for i in 0..<8 {
            set(size - 1 - i, 8, false)
            set(8, size - 1 - i, false)
        }
        set(8, size - 8, true)
        if version >= 7 { drawVersion(version) }
    }

    /// The modules left for data of a version (codewords and remainder bits).
    static func dataModuleCount(version: Int) -> Int {
        QRCodeSymbol(version: version).reserved.lazy.filter { !$0 }.count
    }

    /// The rows and columns of the alignment patterns' centres: none in version 1; from version 2
    /// on, 6, the last one seven modules from the far edge, and those between evenly spaced
    /// (an even step, the remainder taken up between the first two).
    static func alignmentCentres(version: Int) -> [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        let last = 4 * version + 10
        let step = version == 32 ? 26 : ((last - 6) + 2 * (count - 1) - 1) / (2 * (count - 1)) * 2
        return [6] + (0..<count - 1).reversed().map { last - $0 * step }
    }

    /// The QR code of `codewords` at `version`, with `mask` or, when nil, the mask the penalty
    /// rules prefer (the lowest-numbered of equals).
    static func make(version: Int, correction: QRCode.Correction, codewords: [UInt8], mask: Int?) -> QRCodeSymbol {
        var symbol = QRCodeSymbol(version: version)
        symbol.place(codewords)
        if let mask {
            symbol.apply(mask: mask, correction: correction)
            return symbol
        }
        var best: (symbol: QRCodeSymbol, penalty: Int)?
        for candidate in 0..<8 {
            var masked = symbol
            masked.apply(mask: candidate, correction: correction)
            let penalty = masked.penalty()
            if best == nil || penalty < best!.penalty { best = (masked, penalty) }
        }
        return best!.symbol
    }

    private mutating func set(_ x: Int, _ y: Int, _ value: Bool) {
        dark[y * size + x] = value
        reserved[y * size + x] = true
    }

    /// A finder (7 × 7: dark ring, light ring, 3 × 3 dark centre) at its top-left corner, with
    /// the light separator around it where it lies inside the symbol.
    private mutating func drawFinder(_ left: Int, _ top: Int) {
        for dy in -1...7 {
            for dx in -1...7 {
                let (x, y) = (left + dx, top + dy)
                guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                let ring = max(abs(dx - 3), abs(dy - 3))
                set(x, y, ring != 2 && ring != 4)
            }
        }
    }

    /// An alignment pattern (5 × 5: dark ring, light ring, dark centre) around its centre.
    private mutating func drawAlignment(_ cx: Int, _ cy: Int) {
        for dy in -2...2 {
            for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) }
        }
    }

    /// Version information (versions 7 and up): the version in 6 bits and 12 bits of BCH(18, 6)
    /// check, in a 6 × 3 block above the bottom-left finder and its mirror left of the top-right one.
    private mutating func drawVersion(_ version: Int) {
        let bits = version << 12 | Self.bchRemainder(version, generator: 0x1F25, degree: 12)
        for i in 0..<18 {
            let bit = (bits >> i) & 1 == 1
            let (a, b) = (size - 11 + i % 3, i / 3)
            set(a, b, bit)
            set(b, a, bit)
        }
    }

    /// Format information: the level and the mask in 5 bits, 10 bits of BCH(15, 5) check, XORed
    /// with 101010000010010; one copy around the top-left finder, one split between the others.
    private mutating func drawFormat(mask: Int, correction: QRCode.Correction) {
        let level = switch correction {
        case .low: 0b01
        case .medium: 0b00
        case .quartile: 0b11
        case .high: 0b10
        }
        let data = level << 3 | mask
        let bits = (data << 10 | Self.bchRemainder(data, generator: 0x537, degree: 10)) ^ 0b101010000010010
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        // Around the top-left finder: bits 0–7 down column 8 (skipping the timing row), 8–14
        // leftwards along row 8 (skipping the timing column).
        for i in 0..<6 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9..<15 { set(14 - i, 8, bit(i)) }
        // Bits 0–7 leftwards from the right edge along row 8, bits 8–14 down column 8 to the bottom.
        for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
    }

    /// The remainder of value · x^degree divided by the generator polynomial over GF(2).
    private static func bchRemainder(_ value: Int, generator: Int, degree: Int) -> Int {
        var remainder = value << degree
        var top = Int.bitWidth - 1 - remainder.leadingZeroBitCount
        while remainder != 0 && top >= degree {
            remainder ^= generator << (top - degree)
            top = Int.bitWidth - 1 - remainder.leadingZeroBitCount
        }
        return remainder
    }

    /// The codewords' bits, most significant first, in pairs of columns from the right edge,
    /// up the first pair, down the next and so on, skipping reserved modules and the vertical
    /// timing column; the modules left over (remainder bits) stay light.
    private mutating func place(_ codewords: [UInt8]) {
        var index = 0
        let total = codewords.count * 8
        var upward = true
        var right = size - 1
        while right > 0 {
            if right == 6 { right = 5 }
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !reserved[y * size + x] && index < total {
                    dark[y * size + x] = (codewords[index / 8] >> UInt8(7 - index % 8)) & 1 == 1
                    index += 1
                }
            }
            upward.toggle()
            right -= 2
        }
    }

    /// Whether mask `pattern` inverts the module in row `i`, column `j`.
    private static func inverts(_ pattern: Int, _ i: Int, _ j: Int) -> Bool {
        switch pattern {
        case 0: (i + j) % 2 == 0
        case 1: i % 2 == 0
        case 2: j % 3 == 0
        case 3: (i + j) % 3 == 0
        case 4: (i / 2 + j / 3) % 2 == 0
        case 5: (i * j) % 2 + (i * j) % 3 == 0
        case 6: ((i * j) % 2 + (i * j) % 3) % 2 == 0
        default: ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }

    private mutating func apply(mask pattern: Int, correction: QRCode.Correction) {
        for i in 0..<size {
            for j in 0..<size where !reserved[i * size + j] && Self.inverts(pattern, i, j) {
                dark[i * size + j].toggle()
            }
        }
        drawFormat(mask: pattern, correction: correction)
        mask = pattern
    }

    /// The standard's penalty of the whole symbol: runs of five or more modules of one colour in
    /// a row or column (3, plus 1 for each module past five), 2 × 2 blocks of one colour (3
    /// each), finder-like 1:1:3:1:1 patterns with four light modules before or after them (40
    /// each; outside the symbol is light), and the dark share's distance from half (10 for
    /// each full 5 %).
    func penalty() -> Int {
        var score = 0
        for line in 0..<size {
            for horizontal in [true, false] {
                let at: (Int) -> Bool = horizontal ? { dark[line * size + $0] } : { dark[$0 * size + line] }
                // Runs.
                var run = 1
                for k in 1...size {
                    if k < size && at(k) == at(k - 1) {
                        run += 1
                    } else {
                        if run >= 5 { score += run - 2 }
                        run = 1
                    }
                }
                // Finder-like patterns.
                let light: (Int) -> Bool = { k in k < 0 || k >= size || !at(k) }
                for start in 0...(size - 7) {
                    let pattern = at(start) && !at(start + 1) && at(start + 2) && at(start + 3) && at(start + 4) && !at(start + 5) && at(start + 6)
                    guard pattern else { continue }
                    let before = (start - 4..<start).allSatisfy(light)
                    let after = (start + 7..<start + 11).allSatisfy(light)
                    if before || after { score += 40 }
                }
            }
        }
        for y in 0..<size - 1 {
            for x in 0..<size - 1 {
                let c = dark[y * size + x]
                if dark[y * size + x + 1] == c && dark[(y + 1) * size + x] == c && dark[(y + 1) * size + x + 1] == c { score += 3 }
            }
        }
        let darkCount = dark.lazy.filter { $0 }.count
        let total = size * size
        score += abs(darkCount * 20 - total * 10) / total * 10
        return score
    }
}
