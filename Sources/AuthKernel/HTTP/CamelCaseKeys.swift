/// Contract §5, "both spellings": every top-level field authd defines is also accepted in camelCase
/// (`deviceName` for `device_name`). A body's top-level keys are rewritten to snake_case before it is
/// decoded, so no endpoint has to know; nested values (metadata, WebAuthn's own camelCase JSON) pass
/// through byte for byte. Keys are compared as the decoder will read them, escapes resolved
/// (contract §12): `"display\u005fname"` is `display_name`, and an escaped key elsewhere in the body
/// changes nothing.
package enum CamelCaseKeys {
    /// The body with camelCase top-level keys renamed, or nil when there is nothing to rename (or the
    /// body is not an object: the decoder then says what is wrong). Both spellings with the same value
    /// keep one, `null` in one of them counts as absent (a client that sends every key of its model);
    /// two different values are 400 `INVALID_REQUEST` naming the field. A top-level key that is not a
    /// valid JSON string (a malformed escape, half a surrogate pair) is 400 too: skipping the body
    /// would skip the check.
    package static func normalise(_ body: UnsafeRawBufferPointer) throws(AuthError) -> [UInt8]? {
        guard let members = try topLevelMembers(body), members.contains(where: { $0.renamed != nil }) else { return nil }
        var dropped = Set<Int>()
        for (i, member) in members.enumerated() where member.renamed != nil {
            let target = member.renamed!
            // The spellings of one field: this one and any snake_case one it must agree with.
            let group = [i] + members.indices.filter { members[$0].renamed == nil && members[$0].name == target }
            guard group.count > 1 else { continue }
            let isNull = { (j: Int) in body[members[j].value].elementsEqual("null".utf8) }
            let valued = group.filter { !isNull($0) }
            let kept = valued.first ?? group[0]
            for j in valued.dropFirst() where !body[members[j].value].elementsEqual(body[members[kept].value]) {
                throw AuthError.invalidRequest("The fields `\(member.name)` and `\(target)` are the same field with different values.", field: target)
            }
            for j in group where j != kept { dropped.insert(j) }
        }
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 16)
        out.append(UInt8(ascii: "{"))
        var first = true
        for (i, member) in members.enumerated() where !dropped.contains(i) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            // A renamed key is plain snake_case; any other keeps its bytes, escapes and all.
            if let renamed = member.renamed { out.append(contentsOf: renamed.utf8) } else { out.append(contentsOf: body[member.key]) }
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
            out.append(contentsOf: body[member.value])
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `deviceName` → `device_name`, `requestID` → `request_id`; nil when `name` has no capital or is
    /// not a plain identifier (letters and digits), which is left as it is.
    package static func snakeCase(_ name: String) -> String? {
        let scalars = Array(name.utf8)
        guard scalars.contains(where: isUpper), scalars.allSatisfy({ isUpper($0) || isLower($0) || isDigit($0) }) else { return nil }
        var out: [UInt8] = []
        for (i, c) in scalars.enumerated() {
            if isUpper(c), i > 0 {
                let previous = scalars[i - 1]
                let nextIsLower = i + 1 < scalars.count && isLower(scalars[i + 1])
                if isLower(previous) || isDigit(previous) || (isUpper(previous) && nextIsLower) { out.append(UInt8(ascii: "_")) }
            }
            out.append(isUpper(c) ? c + 32 : c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    struct Member {
        /// The key as the decoder reads it, escapes resolved.
        var name: String
        var renamed: String?
        /// The key's bytes between its quotes, as sent.
        var key: Range<Int>
        var value: Range<Int>
    }

    /// The top-level members of a JSON object, each key (escapes resolved) and its value's bytes;
    /// nil when the body is not a well-formed enough object to rewrite safely (the decoder refuses it).
    /// - Throws: 400 `INVALID_REQUEST` for a key that is not a valid JSON string.
    static func topLevelMembers(_ b: UnsafeRawBufferPointer) throws(AuthError) -> [Member]? {
        var i = 0
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }
        /// Moves past a string starting at `i` (a quote); false if it never ends.
        func skipString() -> Bool {
            i += 1
            while i < b.count {
                if b[i] == UInt8(ascii: "\\") { i += 2; continue }
                if b[i] == UInt8(ascii: "\"") { i += 1; return true }
                i += 1
            }
            return false
        }
        func skipValue() -> Bool {
            guard i < b.count else { return false }
            if b[i] == UInt8(ascii: "\"") { return skipString() }
            var depth = 0
            while i < b.count {
                switch b[i] {
                case UInt8(ascii: "\""): if !skipString() { return false }; continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return true }
                    depth -= 1
                    if depth == 0 { i += 1; return true }
                case UInt8(ascii: ","): if depth == 0 { return true }
                default: break
                }
                i += 1
            }
            return depth == 0
        }
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        var members: [Member] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") { return members }
        while true {
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
            let keyStart = i + 1
            guard skipString() else { return nil }
            let key = keyStart..<(i - 1)
            guard let name = JSONStringLiteral.decode(b[key]) else { throw AuthError.invalidRequest("The request body is not valid JSON.") }
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace()
            let valueStart = i
            guard skipValue() else { return nil }
            var valueEnd = i
            while valueEnd > valueStart, [0x20, 0x0A, 0x0D, 0x09].contains(b[valueEnd - 1]) { valueEnd -= 1 }
            guard valueEnd > valueStart else { return nil }
            members.append(Member(name: name, renamed: snakeCase(name), key: key, value: valueStart..<valueEnd))
            skipSpace()
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "}") else { return nil }
            return members
        }
    }

    private static func isUpper(_ c: UInt8) -> Bool { c >= 0x41 && c <= 0x5A }
    private static func isLower(_ c: UInt8) -> Bool { c >= 0x61 && c <= 0x7A }
    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
}
