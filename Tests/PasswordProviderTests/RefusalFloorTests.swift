import AuthKernel
import AuthdCore
import AuthKernelTesting
import Foundation
import HTTPTypes
import Hummingbird
@testable import PasswordProvider
import Testing

/// Contract §12, §17: a refused password sign-in is answered no sooner than `password.refusal_floor_ms`
/// after it arrived, or than the costliest hash scheme held here takes to verify (measured), so
/// unknown, native and imported accounts look alike (finding 9 of the second review: Django-hashed
/// accounts answered in 38 ms, unknown emails in 250). An unknown email hashes nothing: the time is
/// waited out. Checked on the injected clock (the deadline each refusal asked to sleep until, and
/// the time it was answered at) and by the hashes counted; `bench/run` measures the times.
struct RefusalFloorTests {
    typealias T = PasswordTest
    static let config = #"{"mail":{"transport":"outbox"},"password":{"lockout_after":100,"login_per_email":{"limit":100,"window":60}}}"#

    static func provider(_ h: TestHarness) throws -> PasswordProvider {
        try #require(h.server.providers.lazy.compactMap { $0 as? PasswordProvider }.first)
    }

    static func hasher(_ h: TestHarness) throws -> PasswordHasher { try provider(h).hasher }

    /// The floor once authd's own scheme is measured (at start; awaited here so no measurement runs
    /// inside a request's count).
    static func floor(_ h: TestHarness) async throws -> TimeInterval {
        try await provider(h).measureSchemeCosts()
        return micro(try provider(h).refusalFloor)
    }

    /// What one request cost: the deadlines it slept until, how far the clock moved, and the hashes it started.
    struct Cost: Equatable {
        var sleeps: [TimeInterval]
        var moved: TimeInterval
        var hashes: Int

        /// Times equal to within 10 µs: a deadline is a date some 1.7e9 s from 1970, whose last bit
        /// is worth a quarter of a microsecond, read back as an interval.
        static func == (a: Cost, b: Cost) -> Bool {
            func near(_ x: TimeInterval, _ y: TimeInterval) -> Bool { abs(x - y) < 0.000_01 }
            return a.hashes == b.hashes && near(a.moved, b.moved) && a.sleeps.count == b.sleeps.count && zip(a.sleeps, b.sleeps).allSatisfy(near)
        }
    }

    static func cost(_ h: TestHarness, _ request: () async throws -> HarnessResponse) async throws -> (HarnessResponse, Cost) {
        let start = h.clock.now(), slept = h.clock.sleeps.count, hashes = try hasher(h).hashesStarted
        let response = try await request()
        let sleeps = h.clock.sleeps.dropFirst(slept).map { micro($0.timeIntervalSince(start)) }
        return (response, Cost(sleeps: sleeps, moved: micro(h.clock.now().timeIntervalSince(start)), hashes: try hasher(h).hashesStarted - hashes))
    }

    /// Seconds to the microsecond: a deadline computed as a date and read back as an interval differs in its last bits.
    static func micro(_ seconds: TimeInterval) -> TimeInterval { (seconds * 1_000_000).rounded() / 1_000_000 }

    @Test func unknownNativeAndImportedAccountsAreRefusedAtTheFloorAfterTheSameWork() async throws {
        let h = try await T.harness(Self.config)
        _ = try await ImportedHashTests.plant(h, email: "django@x.io", hash: ImportedHashTests.hashes[1])
        _ = try await ImportedHashTests.plant(h, email: "bcrypt@x.io", hash: ImportedHashTests.hashes[0])
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "native@x.io")
            let floor = try await Self.floor(h)
            #expect(floor >= 0.25)
            var answers: [[String: Any]] = []
            for email in ["unknown@x.io", "native@x.io", "django@x.io", "bcrypt@x.io", "unknown@x.io"] {
                let (refused, cost) = try await Self.cost(h) { try await T.login(client, email, "wrong horse battery") }
                #expect(refused.status == .unauthorized && refused.errorCode == "INVALID_CREDENTIALS", "\(email)")
                let hashes = email.hasPrefix("unknown") ? 0 : 1
                #expect(cost == Cost(sleeps: [floor], moved: floor, hashes: hashes), "\(email): held until the floor after it arrived, after \(hashes) hash")
                answers.append(refused.json)
            }
            #expect(answers.allSatisfy { $0 as NSDictionary == answers[0] as NSDictionary }, "and the answers are the same")

            // A right password is not held, native or imported.
            for email in ["native@x.io", "django@x.io"] {
                let (signedIn, cost) = try await Self.cost(h) { try await T.login(client, email, T.password) }
                #expect(signedIn.status == .ok, "\(email)")
                #expect(cost.sleeps.isEmpty && cost.moved == 0, "\(email): \(cost)")
            }
        }
    }

    @Test func everyRefusalAfterTheRateLimitsIsHeldButTheRateLimitsAreNot() async throws {
        let h = try await T.harness(
            #"{"mail":{"transport":"outbox"},"password":{"lockout_after":1,"lockout":60,"refusal_floor_ms":1000,"login_per_email":{"limit":3,"window":600}}}"#)
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "lock@x.io")
            let floor = try await Self.floor(h)
            #expect(floor >= 1.0, "the configured floor, or more when a hash costs more here")
            let (locking, first) = try await Self.cost(h) { try await T.login(client, "lock@x.io", "wrong horse battery") }
            #expect(locking.status == .tooManyRequests && first == Cost(sleeps: [floor], moved: floor, hashes: 1), "the configured floor, for the failure that locks: \(first)")
            for _ in 0..<2 {
                let (locked, cost) = try await Self.cost(h) { try await T.login(client, "lock@x.io", T.password) }
                #expect(locked.status == .tooManyRequests && cost == Cost(sleeps: [floor], moved: floor, hashes: 0), "a locked account, even with its password: \(cost)")
            }
            let (limited, cost) = try await Self.cost(h) { try await T.login(client, "lock@x.io", T.password) }
            #expect(limited.status == .tooManyRequests && cost == Cost(sleeps: [], moved: 0, hashes: 0), "the per-email limit answers at once: \(cost)")
        }
    }

    /// With `refusal_floor_ms` 0 a refusal is still held as long as authd's own hash takes: an
    /// unknown email, which hashes nothing, must not answer sooner than a wrong password.
    @Test func aFloorOfZeroStillHoldsWhatAHashCosts() async throws {
        let h = try await T.harness(#"{"mail":{"transport":"outbox"},"password":{"refusal_floor_ms":0}}"#)
        try await h.test { client async throws in
            let floor = try await Self.floor(h)
            let costliest = try Self.provider(h).schemeCosts.costliest
            #expect(floor > 0 && abs(floor - costliest) < 0.000_01)
            let (refused, cost) = try await Self.cost(h) { try await T.login(client, "nobody@x.io", "wrong horse battery") }
            #expect(refused.status == .unauthorized && cost == Cost(sleeps: [floor], moved: floor, hashes: 0))
        }
    }

    /// Contract §17: an imported scheme costlier than the floor (Django's 1M PBKDF2 rounds) raises
    /// it, once the import listed it and it was measured: one verification of a stand-in, never one
    /// per request. Its cost is set here (the machine's own is measured by `bench/run`).
    @Test func anImportedSchemeCostlierThanTheFloorRaisesItAndIsMeasuredOnce() async throws {
        let h = try await T.harness(Self.config)
        let django = "pbkdf2_sha256$1000000$Q8qzJvYCbWkd$yfFpy5MXMu2vVWdmk/cgRNFPEWnEZ5A7PfqBjDDP0mE="
        let standIn = try #require(PasswordProvider.standIn(for: django))
        #expect(!standIn.contains("Q8qzJvYCbWkd") && PasswordProvider.standIn(for: standIn) == standIn, "no user's hash, the same scheme")
        #expect(PasswordProvider.standIn(for: "$2b$12$" + String(repeating: "a", count: 53)) == "$2b$12$" + String(repeating: ".", count: 53))
        let provider = try Self.provider(h)
        // Costlier than authd's own hash as measured here, however loaded the machine is.
        let costly = max(1.5, (try await Self.floor(h) + 1).rounded(.up))
        // The import lists the scheme; the next measurement verifies its stand-in once.
        let (purpose, key) = PasswordProvider.importedSchemes
        _ = try await h.kernel.codes.issue(purpose: purpose, key: key, policy: CodePolicy(ttl: 86_400, resendInterval: 0, maxAttempts: 1, maxFailures: 1, failureWindow: 1), payload: ["hashes": .array([.string(standIn)])])
        let before = try Self.hasher(h).hashesStarted
        let measured = try await provider.measureSchemeCosts()
        let after = try Self.hasher(h).hashesStarted
        #expect(measured == 1 && after == before + HashSchemeCosts.runs, "the stand-in verified \(HashSchemeCosts.runs) times, the least kept")
        #expect(try await provider.measureSchemeCosts() == 0, "measured once")
        #expect(provider.schemeCosts.isMeasured(standIn))
        provider.schemeCosts.record(standIn, seconds: costly)
        _ = try await ImportedHashTests.plant(h, email: "django@x.io", hash: ImportedHashTests.hashes[1])
        try await h.test { client async throws in
            for email in ["unknown@x.io", "django@x.io"] {
                let (refused, cost) = try await Self.cost(h) { try await T.login(client, email, "wrong horse battery") }
                #expect(refused.status == .unauthorized && cost == Cost(sleeps: [costly], moved: costly, hashes: cost.hashes), "\(email): \(cost)")
                #expect(cost.hashes == (email.hasPrefix("unknown") ? 0 : 1))
            }
        }
    }

    @Test func theFloorIsBetweenZeroAndTenSeconds() throws {
        var none = ConfigSection(path: "password", values: [:])
        #expect(try PasswordSettings(&none).refusalFloorMilliseconds == 250)
        var most = ConfigSection(path: "password", values: ["refusal_floor_ms": .number(10_000)])
        #expect(try PasswordSettings(&most).refusalFloorMilliseconds == 10_000)
        for bad: JSONValue in [.number(-1), .number(10_001), .number(2.5), .string("250")] {
            var section = ConfigSection(path: "password", values: ["refusal_floor_ms": bad])
            #expect(throws: ConfigError.self, "\(bad)") { try PasswordSettings(&section) }
        }
    }

    /// The sign-in page signs a person in with the same check: its refusals are held the same way.
    @Test func theSignInPagesPasswordIsHeldToo() async throws {
        let h = try await T.harness(#"{"issuer":"https://localhost","mail":{"transport":"outbox"},"password":{"lockout_after":100}}"#)
        try await h.test { client async throws in
            _ = try await T.registered(client, h, email: "page@x.io")
            let floor = try await Self.floor(h)
            for (email, password, refused) in [("nobody@x.io", "wrong horse battery", true), ("page@x.io", "wrong horse battery", true), ("page@x.io", T.password, false)] {
                let page = try await client.execute(uri: "/login", method: .get)
                let cookie = try #require(page.headers[.setCookie]?.split(separator: ";").first.map(String.init))
                let html = String(buffer: page.body)
                let csrf = try #require(html.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
                let form = "csrf=\(csrf)&email=\(email)&password=\(password.replacingOccurrences(of: " ", with: "+"))"
                let (answer, cost) = try await Self.cost(h) {
                    try await client.execute(
                        uri: "/login/password/login", method: .post,
                        headers: [.contentType: "application/x-www-form-urlencoded", .origin: "https://localhost", .cookie: cookie],
                        body: ByteBuffer(string: form))
                }
                if refused {
                    #expect(answer.status == .unauthorized && String(buffer: answer.body).contains("page-error"))
                    #expect(cost == Cost(sleeps: [floor], moved: floor, hashes: email.hasPrefix("nobody") ? 0 : 1), "\(email): \(cost)")
                } else {
                    #expect(answer.status == .seeOther && answer.headers[.location] == "/account", "signed in: on to the account")
                    #expect(cost.sleeps.isEmpty && cost.moved == 0, "\(cost)")
                }
            }
        }
    }
}
