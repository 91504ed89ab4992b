package import Foundation

/// Writes JSON bytes directly, for the hottest answers (`GET /me`, `POST /refresh`): Foundation's
/// `JSONEncoder` was the largest cost of those requests in the profile (docs/benchmarks.md).
/// Strings are escaped as RFC 8259 requires; everything else is passed through as UTF-8.
package struct JSONWriter: Sendable {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// Creates an empty writer with room for a typical answer.
    package init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// `{`.
    package mutating func beginObject() {
        comma()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// `}`.
    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// `"key":` before a value.
    package mutating func key(_ key: StaticString) {
        comma()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    /// `"key":` for a key known only at run time (escaped like any string).
    package mutating func key(dynamic key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Bytes that are already one JSON value, copied as they are.
    package mutating func raw(_ json: [UInt8]) {
        comma()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// A line break between top-level values (JSON lines).
    package mutating func newline() {
        bytes.append(0x0A)
        needsComma = false
    }

    /// A string, or `null`.
    package mutating func string(_ value: String?) {
        comma()
        guard let value else { return append("null") }
        bytes.append(UInt8(ascii: "\""))
        // Most strings (tokens, hashes, ids) need no escaping: copy them whole.
        let clean = value.utf8.withContiguousStorageIfAvailable { utf8 in
            !utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0x7F }
        }
        if clean == true {
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\""))
            needsComma = true
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x00..<0x20, 0x7F:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// An integer.
    package mutating func int(_ value: Int) {
        comma()
        append(String(value))
    }

    /// A number as Swift prints it shortest, which reads back to the same `Double`. JSON has no
    /// infinity or NaN: those are written as `null` (as JavaScript's `JSON.stringify` does); printed
    /// as Swift prints them, one in a record made the journal unreadable at the next start-up.
    package mutating func double(_ value: Double) {
        comma()
        guard value.isFinite else { return append("null") }
        append(value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)")
    }

    /// A UUID as `JSONEncoder` writes it (upper case).
    package mutating func uuid(_ value: UUID) {
        string(value.uppercased)
    }

    /// `[`; close with ``endArray()``.
    package mutating func beginArray() {
        comma()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// `]`.
    package mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `true` or `false`.
    package mutating func bool(_ value: Bool) {
        comma()
        append(value ? "true" : "false")
    }

    /// Any JSON value; object keys sorted, as `JSONEncoder` with `.sortedKeys` writes them.
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: comma(); append("null")
        case .bool(let b): bool(b)
        case .number(let n): double(n)
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let members):
            beginObject()
            for key in members.keys.sorted() {
                self.key(dynamic: key)
                self.value(members[key]!)
            }
            endObject()
        }
    }

    /// An array of strings.
    package mutating func strings(_ values: [String]) {
        comma()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for v in values { string(v) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    private mutating func comma() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }
}
