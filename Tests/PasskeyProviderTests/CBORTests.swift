@testable import PasskeyProvider
import Foundation
import Testing

/// The bounded CBOR reader: RFC 8949's examples it must read, the inputs it must refuse, and
/// random and mutated inputs it must survive (refused or read, never a crash or a hang).
struct CBORTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = hex.makeIterator()
        while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
        return out
    }

    @Test func readsRFC8949Examples() throws {
        let cases: [(String, CBOR)] = [
            ("00", .unsigned(0)), ("17", .unsigned(23)), ("1818", .unsigned(24)), ("1903e8", .unsigned(1000)),
            ("1bffffffffffffffff", .unsigned(UInt64.max)), ("20", .negative(-1)), ("3863", .negative(-100)), ("3903e7", .negative(-1000)),
            ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])), ("60", .text("")), ("6449455446", .text("IETF")),
            ("62c3bc", .text("ü")), ("80", .array([])), ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
            ("a201020304", .map([(.unsigned(1), .unsigned(2)), (.unsigned(3), .unsigned(4))])),
            ("a26161016162820203", .map([(.text("a"), .unsigned(1)), (.text("b"), .array([.unsigned(2), .unsigned(3)]))])),
            ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null),
        ]
        for (hex, expected) in cases { #expect(try CBORDecoder.decode(Self.bytes(hex)) == expected, "\(hex)") }
    }

    @Test func refusesWhatWebAuthnNeverSendsAndWhatCouldExhaustTheServer() {
        let refused: [(String, String)] = [
            ("", "empty"), ("18", "argument cut short"), ("5f42010243030405ff", "indefinite byte string"), ("9fff", "indefinite array"),
            ("c11a514b67b0", "tag"), ("f97e00", "half float"), ("fb3ff199999999999a", "double"), ("f0", "simple value"),
            ("1c", "reserved info"), ("0000", "trailing byte"), ("a20102", "map cut short"), ("a2010201 03".replacingOccurrences(of: " ", with: ""), "duplicate map key"),
            ("a1820102 03".replacingOccurrences(of: " ", with: ""), "array as map key"), ("62c328", "invalid UTF-8"),
            ("5bffffffffffffffff", "byte string longer than the input"), ("9bffffffffffffffff", "array count beyond the input"),
            ("3bffffffffffffffff", "negative beyond Int64"),
            (String(repeating: "81", count: 20) + "00", "nested too deeply"),
        ]
        for (hex, why) in refused {
            #expect(throws: CBORError.self, "\(why)") { try CBORDecoder.decode(Self.bytes(hex)) }
        }
        // Elements in all are bounded, however they are spread over containers.
        let many = [0x99, 0x02, 0x01] + Array(repeating: UInt8(0x00), count: 513)
        #expect(throws: CBORError.self) { try CBORDecoder.decode(many) }
        let within = [0x99, 0x02, 0x00] + Array(repeating: UInt8(0x00), count: 512)
        #expect((try? CBORDecoder.decode(within)) != nil)
    }

    /// Random bytes, and single-byte mutations of a real attestation object: every input is read or
    /// refused with an error (a crash ends the test run). How fast is bounded by the element and
    /// depth limits above, which are tested by count; no clock is read here.
    @Test func survivesRandomAndMutatedInput() {
        var rng = SystemRandomNumberGenerator()
        var read = 0, refused = 0
        for _ in 0..<20_000 {
            let input = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if (try? CBORDecoder.decode(input)) != nil { read += 1 } else { refused += 1 }
        }
        let attestation = Self.bytes(WebAuthnTestVectors.packedSelfES256.attestationObject)
        var mutatedRead = 0
        for _ in 0..<20_000 {
            var input = attestation
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                input[Int.random(in: 0..<input.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            if Bool.random(using: &rng) { input = Array(input.prefix(Int.random(in: 0...input.count, using: &rng))) }
            if let value = try? CBORDecoder.decode(input) {
                read += 1
                if let authData = value[text: "authData"]?.bytes { _ = try? AuthenticatorData(authData) }
                mutatedRead += 1
            } else {
                refused += 1
            }
        }
        #expect(read + refused == 40_000)
        // Both paths were taken: most mutations of a real object still parse, truncated ones do not.
        #expect(mutatedRead > 0 && refused > 0)
    }
}
