/// A CBOR (RFC 8949) value, as WebAuthn's attestation objects and COSE keys use them.
///
/// The decoder takes only what those need and bounds everything an authenticator (or an attacker
/// posing as one) controls: definite lengths only, nesting at most ``CBORDecoder/maxDepth`` deep,
/// every length checked against the bytes that are left before anything is allocated, at most
/// ``CBORDecoder/maxItems`` array and map elements in all, map keys only integers or text. Tags,
/// floats and indefinite lengths are refused.
enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// `-1 - n` for the encoded `n`, kept as the value itself (COSE labels and algorithms are small negatives).
    case negative(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Pairs in encoded order; duplicate keys are refused.
    case map([(CBOR, CBOR)])
    case bool(Bool)
    case null

    static func == (a: CBOR, b: CBOR) -> Bool {
        switch (a, b) {
        case (.unsigned(let x), .unsigned(let y)): x == y
        case (.negative(let x), .negative(let y)): x == y
        case (.bytes(let x), .bytes(let y)): x == y
        case (.text(let x), .text(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.map(let x), .map(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    /// The value under `key` in a map (an integer or text key).
    subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    subscript(text key: String) -> CBOR? { self[.text(key)] }

    subscript(int key: Int64) -> CBOR? { self[key >= 0 ? .unsigned(UInt64(key)) : .negative(key)] }

    var bytes: [UInt8]? { if case .bytes(let b) = self { b } else { nil } }
    var text: String? { if case .text(let t) = self { t } else { nil } }
    var int: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n
        default: nil
        }
    }
}

/// Why CBOR could not be read.
struct CBORError: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads CBOR from bytes, within the bounds described on ``CBOR``.
struct CBORDecoder {
    static let maxDepth = 8
    static let maxItems = 512

    private let input: [UInt8]
    private(set) var offset: Int
    private var items = 0

    init(_ input: [UInt8], offset: Int = 0) {
        self.input = input
        self.offset = offset
    }

    /// Decodes exactly one value that fills `input`.
    static func decode(_ input: [UInt8]) throws -> CBOR {
        var decoder = CBORDecoder(input)
        let value = try decoder.next()
        guard decoder.offset == input.count else { throw CBORError("trailing bytes after the CBOR value") }
        return value
    }

    /// Decodes the value at ``offset`` and moves past it (authenticator data holds a COSE key
    /// followed by more bytes).
    mutating func next() throws -> CBOR { try value(depth: 0) }

    private mutating func byte() throws -> UInt8 {
        guard offset < input.count else { throw CBORError("the CBOR ends early") }
        defer { offset += 1 }
        return input[offset]
    }

    private mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
        guard count <= UInt64(input.count - offset) else { throw CBORError("a CBOR length runs past the end") }
        let n = Int(count)
        defer { offset += n }
        return input[offset..<offset + n]
    }

    /// The argument of a head: the additional information, or the 1, 2, 4 or 8 bytes after it.
    private mutating func argument(_ info: UInt8) throws -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            return try take(UInt64(width)).reduce(0) { $0 << 8 | UInt64($1) }
        case 31: throw CBORError("indefinite lengths are not allowed")
        default: throw CBORError("reserved CBOR additional information \(info)")
        }
    }

    /// The element count of an array or map, within the bounds: every element takes at least one
    /// byte, so a count the remaining bytes cannot hold is refused before anything is allocated.
    private mutating func count(_ n: UInt64) throws -> Int {
        guard n <= UInt64(input.count - offset) else { throw CBORError("a CBOR count runs past the end") }
        guard n <= UInt64(Self.maxItems - items) else { throw CBORError("too many CBOR items") }
        items += Int(n)
        return Int(n)
    }

    private mutating func value(depth: Int) throws -> CBOR {
        guard depth <= Self.maxDepth else { throw CBORError("CBOR nested too deeply") }
        let head = try byte()
        let major = head >> 5, info = head & 0x1f
        switch major {
        case 0: return .unsigned(try argument(info))
        case 1:
            let n = try argument(info)
            guard n <= UInt64(Int64.max) else { throw CBORError("a negative CBOR integer out of range") }
            return .negative(-1 - Int64(n))
        case 2: return .bytes(Array(try take(try argument(info))))
        case 3:
            guard let text = String(validating: try take(try argument(info)), as: UTF8.self) else { throw CBORError("CBOR text is not UTF-8") }
            return .text(text)
        case 4:
            let n = try count(try argument(info))
            var values: [CBOR] = []
            values.reserveCapacity(n)
            for _ in 0..<n { values.append(try value(depth: depth + 1)) }
            return .array(values)
        case 5:
            let n = try count(try argument(info))
            var pairs: [(CBOR, CBOR)] = []
            pairs.reserveCapacity(n)
            for _ in 0..<n {
                let key = try value(depth: depth + 1)
                switch key {
                case .unsigned, .negative, .text: break
                default: throw CBORError("CBOR map keys must be integers or text")
                }
                guard !pairs.contains(where: { $0.0 == key }) else { throw CBORError("a CBOR map repeats a key") }
                pairs.append((key, try value(depth: depth + 1)))
            }
            return .map(pairs)
        case 6: throw CBORError("CBOR tags are not allowed here")
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            default: throw CBORError("unsupported CBOR simple value or float")
            }
        }
    }
}
