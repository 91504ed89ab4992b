/// How a version's codewords are divided: the error correction codewords per block and the
/// number of blocks for each version and level (ISO/IEC 18004's table of error correction
/// characteristics), and the interleaving of the blocks into the symbol's sequence.
enum QRCodeLayout {
    /// Error correction codewords per block, versions 1 through 40.
    private static let eccPerBlock: [QRCode.Correction: [Int]] = [
        .low: [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
               28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        .medium: [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
                  26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
        .quartile: [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
                    28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        .high: [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
                30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
    ]

    /// Blocks, versions 1 through 40.
    private static let blockCount: [QRCode.Correction: [Int]] = [
        .low: [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
               8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
        .medium: [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
                  17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
        .quartile: [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
                    23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
        .high: [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
                25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
    ]

    /// All codewords a version holds (data and error correction): the modules no function
    /// pattern, format or version information takes, eight to a codeword; the rest are
    /// remainder bits.
    private static let totalCodewords: [Int] = (1...40).map { QRCodeSymbol.dataModuleCount(version: $0) / 8 }

    /// The data codewords of a version at a level.
    static func dataCodewordCount(version: Int, correction: QRCode.Correction) -> Int {
        let (blocks, ecc) = blocks(version, correction)
        return totalCodewords[version - 1] - blocks * ecc
    }

    private static func blocks(_ version: Int, _ correction: QRCode.Correction) -> (count: Int, ecc: Int) {
        (blockCount[correction]![version - 1], eccPerBlock[correction]![version - 1])
    }

    /// The symbol's codeword sequence: the data cut into blocks (the shorter ones first, the
    /// longer ones one codeword more), each block's error correction added, then the first
    /// codeword of every block, the second of every block, and so on, data before correction.
    static func codewords(_ data: [UInt8], version: Int, correction: QRCode.Correction) -> [UInt8] {
        let (count, ecc) = blocks(version, correction)
        let total = totalCodewords[version - 1]
        let longBlocks = total % count
        let shortLength = total / count - ecc
        let generator = ReedSolomon.generator(degree: ecc)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var start = 0
        for index in 0..<count {
            let length = shortLength + (index >= count - longBlocks ? 1 : 0)
            let block = Array(data[start..<start + length])
            start += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(block, generator: generator))
        }
        var sequence: [UInt8] = []
        sequence.reserveCapacity(total)
        for column in 0...shortLength {
            for block in dataBlocks where column < block.count { sequence.append(block[column]) }
        }
        for column in 0..<ecc {
            for block in eccBlocks { sequence.append(block[column]) }
        }
        return sequence
    }
}
