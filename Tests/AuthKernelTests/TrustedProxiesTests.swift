import AuthKernel
import Testing

struct TrustedProxiesTests {
    @Test func addressesAndRangesOfBothFamilies() throws {
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8", "192.168.1.0/25"])
        #expect(proxies.contains("127.0.0.1"))
        #expect(proxies.contains("10.200.3.4"))
        #expect(!proxies.contains("11.0.0.1"))
        #expect(proxies.contains("::1"))
        #expect(proxies.contains("fd12:3456::1"))
        #expect(!proxies.contains("fe80::1"))
        #expect(proxies.contains("192.168.1.127"))
        #expect(!proxies.contains("192.168.1.128"))
        #expect(proxies.contains("::ffff:10.1.2.3"))  // IPv4-mapped
        #expect(!proxies.contains("not an address"))
    }

    @Test func forwardedForIsBelievedOnlyFromATrustedPeer() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8"])
        #expect(proxies.clientAddress(peer: "203.0.113.9", forwardedFor: "198.51.100.1") == "203.0.113.9")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: "198.51.100.1") == "198.51.100.1")
        // The client may have sent its own header: only the hop our proxy added counts.
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: "1.2.3.4, 198.51.100.1") == "198.51.100.1")
        // Chained trusted proxies are skipped from the right.
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: "198.51.100.1, 10.0.0.7") == "198.51.100.1")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: "garbage") == "10.0.0.2")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: nil) == "10.0.0.2")
        #expect(TrustedProxies.none.clientAddress(peer: "10.0.0.2", forwardedFor: "198.51.100.1") == "10.0.0.2")
    }

    @Test func badEntriesAreConfigErrors() {
        #expect(throws: ConfigError.self) { try TrustedProxies(["10.0.0.0/33"]) }
        #expect(throws: ConfigError.self) { try TrustedProxies(["proxy.example.com"]) }
    }
}
