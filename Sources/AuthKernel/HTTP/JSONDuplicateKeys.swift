/// Finds a key that appears twice in one JSON object.
///
/// JSON parsers disagree on which copy of a duplicated key wins, so a body with one could mean one
/// thing to a proxy or a client library and another to authd: such bodies are refused instead.
/// Runs after `JSONDecoder` accepted the bytes, so it only needs to walk valid JSON.
package enum JSONDuplicateKeys {
    private struct Level {
        var isObject: Bool
        var expectingKey: Bool
        var keys: Set<String> = []
    }

    /// The first duplicated key, or nil.
    package static func first(in bytes: some Collection<UInt8>) -> String? {
        let bytes = Array(bytes)
        var stack: [Level] = []
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "{"): stack.append(Level(isObject: true, expectingKey: true))
            case UInt8(ascii: "["): stack.append(Level(isObject: false, expectingKey: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = stack.popLast()
            case UInt8(ascii: ","): if stack.last?.isObject == true { stack[stack.count - 1].expectingKey = true }
            case UInt8(ascii: "\""):
                let start = i
                var escaped = false
                i += 1
                while i < bytes.count, !(bytes[i] == UInt8(ascii: "\"") && !escaped) {
                    escaped = !escaped && bytes[i] == UInt8(ascii: "\\")
                    i += 1
                }
                if let top = stack.last, top.isObject, top.expectingKey {
                    let raw = bytes[(start + 1)..<min(i, bytes.count)]
                    // Keys compare after unescaping: "a" and "\u0061" are the same key.
                    let key = JSONStringLiteral.decode(raw) ?? String(decoding: raw, as: UTF8.self)
                    if !stack[stack.count - 1].keys.insert(key).inserted { return key }
                    stack[stack.count - 1].expectingKey = false
                }
            default: break
            }
            i += 1
        }
        return nil
    }
}
