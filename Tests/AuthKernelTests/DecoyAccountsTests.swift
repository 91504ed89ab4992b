import AuthKernel
import Foundation
import Testing

struct DecoyAccountsTests {
    struct Counter: Sendable { var failures = 0 }
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aDecoyKeepsItsStateAcrossTries() {
        let decoys = DecoyAccounts<Counter>()
        for _ in 0..<3 { decoys.withRecord("a@x", now: now, make: { Counter() }) { $0.failures += 1 } }
        #expect(decoys.withRecord("a@x", now: now, make: { Counter() }) { $0.failures } == 3)
        #expect(decoys.withRecord("b@x", now: now, make: { Counter() }) { $0.failures } == 0)
    }

    @Test func theLeastRecentlyTriedAreForgottenFirstAndTheTableStaysBounded() {
        let decoys = DecoyAccounts<Counter>(capacity: 100)
        for i in 0..<100 { decoys.withRecord("k\(i)", now: now.addingTimeInterval(Double(i)), make: { Counter() }) { $0.failures = 1 } }
        // Touch the oldest one so it counts as recent.
        decoys.withRecord("k0", now: now.addingTimeInterval(500), make: { Counter() }) { $0.failures += 1 }
        decoys.withRecord("new", now: now.addingTimeInterval(600), make: { Counter() }) { $0.failures = 1 }
        #expect(decoys.count == 91)
        #expect(decoys.withRecord("k0", now: now, make: { Counter() }) { $0.failures } == 2)
        #expect(decoys.withRecord("k1", now: now, make: { Counter() }) { $0.failures } == 0)  // forgotten
    }
}
