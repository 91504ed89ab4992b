/// Reed–Solomon error correction over GF(256) as QR codes use it: the field of the primitive
/// polynomial x⁸ + x⁴ + x³ + x² + 1, generator polynomials with roots α⁰ … αⁿ⁻¹.
enum ReedSolomon {
    /// αⁱ for i in 0..<255, then repeated, so that a sum of two logarithms needs no reduction.
    private static let exp: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 510)
        var value = 1
        for i in 0..<255 {
            table[i] = UInt8(value)
            table[i + 255] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return table
    }()

    /// The logarithm to base α of every nonzero element.
    private static let log: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for i in 0..<255 { table[Int(exp[i])] = i }
        return table
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return exp[log[Int(a)] + log[Int(b)]]
    }

    /// (x − α⁰)(x − α¹)…(x − αᵈᵉᵍʳᵉᵉ⁻¹), its coefficients from the highest power down; the
    /// leading 1 is left out.
    static func generator(degree: Int) -> [UInt8] {
        var coefficients: [UInt8] = [1]
        for i in 0..<degree {
            let root = exp[i]
            var next = [UInt8](repeating: 0, count: coefficients.count + 1)
            for (j, c) in coefficients.enumerated() {
                next[j] ^= c
                next[j + 1] ^= multiply(c, root)
            }
            coefficients = next
        }
        return Array(coefficients.dropFirst())
    }

    /// The remainder of data(x) · xⁿ divided by the generator: the block's n error correction
    /// codewords.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for (i, g) in generator.enumerated() { remainder[i] ^= multiply(g, factor) }
        }
        return remainder
    }
}
