#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The reverse proxies whose `X-Forwarded-For` authd believes (`http.trusted_proxies`: addresses or
/// CIDR ranges, IPv4 or IPv6). From anyone else the header is ignored, so a client cannot pick the
/// address its per-IP rate limits count against.
package struct TrustedProxies: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        var bytes: [UInt8]
        var prefix: Int
    }
    let ranges: [Range]

    /// No trusted proxy: the peer's address is the client's.
    package static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) { self.ranges = ranges }

    /// Parses `["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"]`.
    /// - Throws: ``ConfigError`` naming the entry that is not an address or a range.
    package init(_ entries: [String]) throws {
        ranges = try entries.map { entry in
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = Self.parse(parts[0]) else { throw ConfigError("http.trusted_proxies: \"\(entry)\" is not an IP address or CIDR range") }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...(bytes.count * 8)).contains(prefix) else {
                throw ConfigError("http.trusted_proxies: \"\(entry)\" has a prefix length out of range")
            }
            return Range(bytes: bytes, prefix: prefix)
        }
    }

    /// Whether `address` is one of the trusted proxies.
    package func contains(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.parse(address) else { return false }
        return ranges.contains { range in
            guard range.bytes.count == bytes.count else { return false }
            var bits = range.prefix
            for i in 0..<bytes.count where bits > 0 {
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if bytes[i] & mask != range.bytes[i] & mask { return false }
                bits -= 8
            }
            return true
        }
    }

    /// The client's address: the peer's, unless the peer is a trusted proxy; then the right-most
    /// `X-Forwarded-For` entry that is not itself a trusted proxy (entries left of it are whatever
    /// the client claimed, and not believed).
    package func clientAddress(peer: String, forwardedFor: String?) -> String {
        guard contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        for hop in hops.reversed() {
            guard Self.parse(hop) != nil else { return peer }  // garbage: believe nothing
            if !contains(hop) { return hop }
        }
        return hops.first ?? peer
    }

    /// IPv4 (4 bytes) or IPv6 (16 bytes); an IPv4-mapped IPv6 address counts as IPv4.
    static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
