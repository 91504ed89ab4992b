/// A request body of the simplest shape, `{"key": "value", …}` with plain strings, read without
/// `JSONDecoder` (a visible share of `POST /refresh` in the profile, docs/benchmarks.md).
///
/// It accepts only what it can read exactly as `JSONDecoder` would: keys and values of printable
/// ASCII without escapes, no key twice, nothing after the object. Anything else gives nil, and the
/// caller decodes the body the usual way, which also produces the contract's error messages.
package struct FlatJSONObject: Sendable {
    /// Most fields read this way (real bodies have one or two).
    static let maxFields = 16
    /// The fields in body order.
    package private(set) var fields: [(key: String, value: String)] = []

    /// The value of `key`, if present.
    package subscript(key: String) -> String? { fields.first { $0.key == key }?.value }

    /// Reads `bytes`, or nil when they are not of the simple shape.
    package init?(_ bytes: some Collection<UInt8>) {
        var i = bytes.startIndex
        func skipSpace() {
            while i != bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i = bytes.index(after: i) }
        }
        func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard i != bytes.endIndex, bytes[i] == byte else { return false }
            i = bytes.index(after: i)
            return true
        }
        func plainString() -> String? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            let start = i
            while i != bytes.endIndex, bytes[i] != UInt8(ascii: "\"") {
                guard (0x20...0x7E).contains(bytes[i]), bytes[i] != UInt8(ascii: "\\") else { return nil }
                i = bytes.index(after: i)
            }
            guard i != bytes.endIndex else { return nil }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            i = bytes.index(after: i)
            return text
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        skipSpace()
        if i != bytes.endIndex, bytes[i] == UInt8(ascii: "}") {
            i = bytes.index(after: i)
        } else {
            while true {
                // The duplicate check is quadratic: a body of thousands of fields takes the usual path.
                guard fields.count < Self.maxFields, let key = plainString(), expect(UInt8(ascii: ":")), let value = plainString() else { return nil }
                guard !fields.contains(where: { $0.key == key }) else { return nil }
                fields.append((key, value))
                if expect(UInt8(ascii: ",")) { continue }
                guard expect(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        skipSpace()
        guard i == bytes.endIndex else { return nil }
    }
}

/// A body type that can be read from a ``FlatJSONObject`` when the body has that shape.
package protocol FlatJSONDecodable: Decodable {
    /// The value the fields give, or nil to decode the body the usual way (a missing or extra
    /// field's error message comes from there).
    init?(flat: FlatJSONObject)
}
