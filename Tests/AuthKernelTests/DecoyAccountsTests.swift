import AuthKernel
import Foundation
import Testing

struct DecoyAccountsTests {
    struct Counter: Codable, Sendable { var failures = 0 }
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aDecoyKeepsItsStateAcrossTries() async throws {
        let decoys = DecoyAccounts<Counter>()
        for _ in 0..<3 { try await decoys.withRecord("a@x", now: now, make: { Counter() }) { $0.failures += 1 } }
        #expect(try await decoys.withRecord("a@x", now: now, make: { Counter() }) { $0.failures } == 3)
        #expect(try await decoys.withRecord("b@x", now: now, make: { Counter() }) { $0.failures } == 0)
    }

    @Test func theLeastRecentlyTriedAreForgottenFirstAndTheTableStaysBounded() async throws {
        let decoys = DecoyAccounts<Counter>(capacity: 100)
        for i in 0..<100 {
            let at = now.addingTimeInterval(Double(i))
            try await decoys.withRecord("k\(i)", now: at, make: { Counter() }) { $0.failures = 1 }
        }
        // Touch the oldest one so it counts as recent.
        try await decoys.withRecord("k0", now: now.addingTimeInterval(500), make: { Counter() }) { $0.failures += 1 }
        try await decoys.withRecord("new", now: now.addingTimeInterval(600), make: { Counter() }) { $0.failures = 1 }
        #expect(decoys.count == 91)
        #expect(try await decoys.withRecord("k0", now: now, make: { Counter() }) { $0.failures } == 2)
        #expect(try await decoys.withRecord("k1", now: now, make: { Counter() }) { $0.failures } == 0)  // forgotten
    }
}
