/// The key per-client limits count under: an IPv4 address as it is, an IPv6 address by its /64.
///
/// One IPv6 subscriber usually holds a whole /64 (2^64 addresses), so a limit per IPv6 address is
/// no limit at all: each request could come from a fresh one.
package enum ClientNetwork {
    package static func key(for address: String) -> String {
        guard let bytes = TrustedProxies.parse(address) else { return address.count <= 64 ? address : String(address.prefix(64)) }
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// The network a person's requests come from, as limits that must not let one place lock an
    /// account's owner out count them (contract §12): an IPv4 /24 (`203.0.113.0/24`) or an IPv6 /48.
    package static func network(for address: String) -> String {
        guard let bytes = TrustedProxies.parse(address) else { return address.count <= 64 ? address : String(address.prefix(64)) }
        if bytes.count == 4 { return "\(bytes[0]).\(bytes[1]).\(bytes[2]).0/24" }
        let groups = stride(from: 0, to: 6, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/48"
    }
}
