package import Foundation

/// A byte-level JSON reader for the store's own records at start-up, where `JSONDecoder` cost about
/// 14 s of CPU for a million users (docs/benchmarks.md). It reads what the store wrote; anything it
/// does not expect makes it return nil, and the caller falls back to `JSONDecoder`, which then
/// reports real damage with its own message.
package struct JSONReader {
    package struct Mismatch: Error { package init() {} }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0

    package init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package var atEnd: Bool {
        mutating get {
            skipSpace()
            return i == bytes.count
        }
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipSpace()
        guard i < bytes.count, bytes[i] == byte else { throw Mismatch() }
        i += 1
    }

    private mutating func peek() throws -> UInt8 {
        skipSpace()
        guard i < bytes.count else { throw Mismatch() }
        return bytes[i]
    }

    /// Calls `body` with each key of an object; `body` must read the key's value.
    package mutating func object(_ body: (inout JSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if try peek() == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
            if try peek() == UInt8(ascii: ",") {
                i += 1
                continue
            }
            try expect(UInt8(ascii: "}"))
            return
        }
    }

    /// Calls `body` for each element of an array; `body` must read the element.
    package mutating func array(_ body: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if try peek() == UInt8(ascii: "]") {
            i += 1
            return
        }
        while true {
            try body(&self)
            if try peek() == UInt8(ascii: ",") {
                i += 1
                continue
            }
            try expect(UInt8(ascii: "]"))
            return
        }
    }

    /// Whether the next value is `null` (consumed if so).
    package mutating func null() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        guard i + 4 <= bytes.count, bytes[i + 1] == UInt8(ascii: "u"), bytes[i + 2] == UInt8(ascii: "l"), bytes[i + 3] == UInt8(ascii: "l") else {
            throw Mismatch()
        }
        i += 4
        return true
    }

    package mutating func bool() throws -> Bool {
        let c = try peek()
        if c == UInt8(ascii: "t"), i + 4 <= bytes.count, bytes[i + 1] == UInt8(ascii: "r"), bytes[i + 2] == UInt8(ascii: "u"), bytes[i + 3] == UInt8(ascii: "e") {
            i += 4
            return true
        }
        if c == UInt8(ascii: "f"), i + 5 <= bytes.count, bytes[i + 1] == UInt8(ascii: "a"), bytes[i + 2] == UInt8(ascii: "l"),
            bytes[i + 3] == UInt8(ascii: "s"), bytes[i + 4] == UInt8(ascii: "e")
        {
            i += 5
            return false
        }
        throw Mismatch()
    }

    package mutating func number() throws -> Double {
        skipSpace()
        let start = i
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): i += 1
            default:
                guard i > start, let value = Double(Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)) else { throw Mismatch() }
                return value
            }
        }
        guard i > start, let value = Double(Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)) else { throw Mismatch() }
        return value
    }

    package mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = i
        // Fast path: no escapes.
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                i += 1
                return s
            }
            if c == UInt8(ascii: "\\") || c < 0x20 { break }
            i += 1
        }
        var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw Mismatch() }
                return s
            case UInt8(ascii: "\\"):
                guard i < bytes.count else { throw Mismatch() }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { throw Mismatch() }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw Mismatch() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw Mismatch() }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw Mismatch()
                }
            default:
                guard c >= 0x20 else { throw Mismatch() }
                out.append(c)
            }
        }
        throw Mismatch()
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw Mismatch() }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            i += 1
            v <<= 4
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v |= UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v |= UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v |= UInt32(c - UInt8(ascii: "A") + 10)
            default: throw Mismatch()
            }
        }
        return v
    }

    /// Any value, for the parts of records whose shape varies (provider secrets, payloads).
    package mutating func value() throws -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"):
            var o: [String: JSONValue] = [:]
            try object { r, key in o[key] = try r.value() }
            return .object(o)
        case UInt8(ascii: "["):
            var a: [JSONValue] = []
            try array { r in a.append(try r.value()) }
            return .array(a)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool(try bool())
        case UInt8(ascii: "n"):
            _ = try null()
            return .null
        default: return .number(try number())
        }
    }

    package mutating func date() throws -> Date { Date(timeIntervalSince1970: try number()) }

    package mutating func uuid() throws -> UUID {
        guard let id = UUID(text: try string()) else { throw Mismatch() }
        return id
    }

    package mutating func optionalString() throws -> String? { try null() ? nil : try string() }

    /// An array of strings.
    package mutating func strings() throws -> [String] {
        var list: [String] = []
        try array { list.append(try $0.string()) }
        return list
    }
}

extension StoreChange {
    /// A user or session record, its deletion or a session's rotation, read by ``JSONReader``; nil for any other record,
    /// or anything unexpected (the caller then uses `JSONDecoder`).
    package static func fastDecode(_ bytes: UnsafeBufferPointer<UInt8>) -> StoreChange? {
        var reader = JSONReader(bytes)
        guard let change = try? read(&reader), reader.atEnd else { return nil }
        return change
    }

    /// Reads one change object at the reader's position; throws ``JSONReader/Mismatch`` for any
    /// record without a hand-written form.
    package static func read(_ r: inout JSONReader) throws -> StoreChange {
        var op: String?
        var user: UserRecord?
        var session: SessionRecord?
        var rotation: SessionRotation?
        var id: UUID?
        try r.object { r, key in
            switch key {
            case "op": op = try r.string()
            case "user": user = try UserRecord.read(&r)
            case "session": session = try SessionRecord.read(&r)
            case "rotation": rotation = try SessionRotation.read(&r)
            case "id": id = try r.uuid()
            default: throw JSONReader.Mismatch()
            }
        }
        switch op.flatMap(Op.init(rawValue:)) {
        case .putUser: if let user { return .putUser(user) }
        case .putSession: if let session { return .putSession(session) }
        case .deleteUser: if let id { return .deleteUser(id) }
        case .deleteSession: if let id { return .deleteSession(id) }
        case .rotateSession: if let rotation { return .rotateSession(rotation) }
        default: break
        }
        throw JSONReader.Mismatch()
    }
}


extension UserRecord {
    package static func read(_ r: inout JSONReader) throws -> UserRecord {
        var id: UUID?, created: Date?, updated: Date?
        // A placeholder id until the record's own is read: the default draws a random one, and that
        // getrandom(2) per user was 5 % of a million-user start-up.
        var user = UserRecord(id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), createdAt: Date(timeIntervalSince1970: 0))
        var seen = (emailVerified: false, isAnonymous: false, identities: false, secrets: false)
        try r.object { r, key in
            switch key {
            case "id": id = try r.uuid()
            case "email": user.email = try r.optionalString()
            case "email_verified": user.emailVerified = try r.bool(); seen.emailVerified = true
            case "display_name": user.displayName = try r.optionalString()
            case "username": user.username = try r.optionalString()
            case "locale": user.locale = try r.optionalString()
            case "is_anonymous": user.isAnonymous = try r.bool(); seen.isAnonymous = true
            case "identities":
                seen.identities = true
                try r.array { r in
                    var provider: String?, subject: String?
                    try r.object { r, key in
                        switch key {
                        case "provider": provider = try r.string()
                        case "subject": subject = try r.string()
                        default: throw JSONReader.Mismatch()
                        }
                    }
                    guard let provider, let subject else { throw JSONReader.Mismatch() }
                    user.identities.append(Identity(provider: provider, subject: subject))
                }
            case "secrets":
                seen.secrets = true
                guard case .object(let o) = try r.value() else { throw JSONReader.Mismatch() }
                user.secrets = o
            case "created_at": created = try r.date()
            case "updated_at": updated = try r.date()
            case "disabled_at": user.disabledAt = try r.null() ? nil : try r.date()
            case "credential_version":
                guard let n = Int(exactly: try r.number()), n >= 0 else { throw JSONReader.Mismatch() }
                user.credentialVersion = n
            case "user_metadata":
                guard case .object(let o) = try r.value() else { throw JSONReader.Mismatch() }
                user.userMetadata = o
            case "app_metadata":
                guard case .object(let o) = try r.value() else { throw JSONReader.Mismatch() }
                user.appMetadata = o
            case "groups":
                guard case .array(let items) = try r.value() else { throw JSONReader.Mismatch() }
                user.groups = try items.map { item -> String in
                    guard case .string(let group) = item else { throw JSONReader.Mismatch() }
                    return group
                }
            default: throw JSONReader.Mismatch()
            }
        }
        guard let id, let created, let updated, seen.emailVerified, seen.isAnonymous, seen.identities, seen.secrets else { throw JSONReader.Mismatch() }
        user.id = id
        user.createdAt = created
        user.updatedAt = updated
        return user
    }
}

extension SessionRecord {
    package static func read(_ r: inout JSONReader) throws -> SessionRecord {
        var id: UUID?, userID: UUID?, created: Date?, lastUsed: Date?, expires: Date?
        var deviceName: String?, platform: String?, amr: [String]?, hashes: [String]?, retired: [RetiredRefreshToken]?
        var kind: SessionRecord.Kind?, keyPrefix: String?, clientID: String?, clientGrant: String?, authTime: Date?, network: String?
        try r.object { r, key in
            switch key {
            case "kind":
                guard let k = SessionRecord.Kind(rawValue: try r.string()) else { throw JSONReader.Mismatch() }
                kind = k
            case "key_prefix": keyPrefix = try r.optionalString()
            case "client_id": clientID = try r.optionalString()
            case "client_grant": clientGrant = try r.optionalString()
            case "auth_time": authTime = try r.date()
            case "id": id = try r.uuid()
            case "user_id": userID = try r.uuid()
            case "device_name": deviceName = try r.optionalString()
            case "platform": platform = try r.optionalString()
            case "network": network = try r.optionalString()
            case "amr":
                amr = try r.strings()
            case "created_at": created = try r.date()
            case "last_used_at": lastUsed = try r.date()
            case "expires_at": expires = try r.date()
            case "refresh_hashes":
                hashes = try r.strings()
            case "retired":
                var list: [RetiredRefreshToken] = []
                try r.array { r in
                    var hash: String?, at: Date?
                    try r.object { r, key in
                        switch key {
                        case "hash": hash = try r.string()
                        case "retired_at": at = try r.date()
                        default: throw JSONReader.Mismatch()
                        }
                    }
                    guard let hash, let at else { throw JSONReader.Mismatch() }
                    list.append(RetiredRefreshToken(hash: hash, retiredAt: at))
                }
                retired = list
            default: throw JSONReader.Mismatch()
            }
        }
        guard let id, let userID, let created, let lastUsed, let expires, let amr, let hashes, let retired else { throw JSONReader.Mismatch() }
        var s = SessionRecord(id: id, userID: userID, deviceName: deviceName, platform: platform, amr: amr, createdAt: created, expiresAt: expires, refreshHash: "")
        s.lastUsedAt = lastUsed
        s.refreshHashes = hashes
        s.retired = retired
        s.kind = kind
        s.keyPrefix = keyPrefix
        s.clientID = clientID
        s.clientGrant = clientGrant
        s.authTime = authTime
        s.network = network
        return s
    }
}

extension SessionRotation {
    package static func read(_ r: inout JSONReader) throws -> SessionRotation {
        var id: UUID?, dropped: Int?, retiredAt: Date?, hashes: [String]?, lastUsed: Date?, expires: Date?
        try r.object { r, key in
            switch key {
            case "id": id = try r.uuid()
            case "dropped":
                guard let n = Int(exactly: try r.number()), n >= 0 else { throw JSONReader.Mismatch() }
                dropped = n
            case "retired_at": retiredAt = try r.date()
            case "refresh_hashes":
                hashes = try r.strings()
            case "last_used_at": lastUsed = try r.date()
            case "expires_at": expires = try r.date()
            default: throw JSONReader.Mismatch()
            }
        }
        guard let id, let dropped, let retiredAt, let hashes, let lastUsed, let expires else { throw JSONReader.Mismatch() }
        return SessionRotation(id: id, dropped: dropped, retiredAt: retiredAt, refreshHashes: hashes, lastUsedAt: lastUsed, expiresAt: expires)
    }
}
