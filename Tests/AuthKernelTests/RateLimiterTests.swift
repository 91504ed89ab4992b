@testable import AuthKernel
import Foundation
import HTTPTypes
import Testing

struct RateLimiterTests {
    @Test func exactUnderConcurrency() async {
        let limiter = RateLimiter(clock: ManualClock())
        let rule = RateLimitRule(limit: 1, window: 60)
        let allowed = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { (try? await limiter.attempt(rule, key: "k")) == .some(nil) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 1)
    }

    @Test func exactForLargerLimitUnderConcurrency() async {
        let limiter = RateLimiter(clock: ManualClock())
        let rule = RateLimitRule(limit: 7, window: 60)
        let allowed = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<100 { group.addTask { (try? await limiter.attempt(rule, key: "k")) == .some(nil) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 7)
    }

    @Test func saysHowLongToWaitAndRefills() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(clock: clock)
        let rule = RateLimitRule(limit: 2, window: 60)
        #expect(try await limiter.attempt(rule, key: "k") == nil)
        #expect(try await limiter.attempt(rule, key: "k") == nil)
        #expect(try await limiter.attempt(rule, key: "k") == 30)
        #expect(try await limiter.attempt(rule, key: "other") == nil)
        clock.advance(by: 29.5)
        #expect(try await limiter.attempt(rule, key: "k") == 1)
        clock.advance(by: 0.5)
        #expect(try await limiter.attempt(rule, key: "k") == nil)
        await #expect(throws: AuthError.self) { try await limiter.consume(rule, key: "k") }
        do {
            try await limiter.consume(rule, key: "k")
        } catch {
            #expect(error.status == .tooManyRequests)
            #expect(error.retryAfter == 30)
        }
        await limiter.reset(key: "k")
        #expect(try await limiter.attempt(rule, key: "k") == nil)
    }
}

/// Review finding 7: per-IP limits keyed IPv6 by the whole address (a /64 holds 2^64 of them), and
/// past 100k keys every check copied and filtered the whole table under one lock.
struct ReviewFindingsRateLimitTests {
    @Test func ipv4CountsByAddressAndIPv6ByItsSlash64() {
        #expect(ClientNetwork.key(for: "203.0.113.7") == "203.0.113.7")
        #expect(ClientNetwork.key(for: "::ffff:203.0.113.7") == "203.0.113.7")
        #expect(ClientNetwork.key(for: "2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(ClientNetwork.key(for: "2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(ClientNetwork.key(for: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(ClientNetwork.key(for: "::1") == "0:0:0:0::/64")
    }

    @Test func manyDistinctKeysCostAmortisedWorkAndStayBounded() async throws {
        let counters = MemoryRateLimitCounters(capacity: 20_000, shards: 4)
        // None of these expire: before, every check past 100k keys filtered the whole table.
        let takes = 150_000
        for i in 0..<takes { _ = counters.take(key: "k\(i)", now: 1000, interval: 3600, tolerance: 0) }
        // The work is counted, not timed: a full shard's clean-up looks at its entries twice (filter,
        // then sort) and frees a tenth of them, so about 20 entries per take whatever the key count.
        // Filtering the table on every take past a threshold would be thousands per take.
        #expect(counters.entriesExamined <= 25 * takes, "\(counters.entriesExamined) entries examined for \(takes) takes")
        #expect(counters.count <= 20_000)
        // A key just used is still limited after all that.
        #expect(counters.take(key: "k149999", now: 1000, interval: 3600, tolerance: 0) != nil)
    }

    @Test func longKeysAreKeptAsTheirHash() {
        let counters = MemoryRateLimitCounters()
        let long = String(repeating: "x", count: 60_000)
        #expect(counters.take(key: long, now: 0, interval: 60, tolerance: 0) == nil)
        #expect(counters.take(key: long, now: 0, interval: 60, tolerance: 0) != nil)
        #expect(MemoryRateLimitCounters.stored(long).utf8.count <= MemoryRateLimitCounters.maxKeyBytes)
    }
}

struct RateLimiterReloadTests {
    @Test func aReloadTakesNamedRulesFromTheNewFileAndFallsBackToTheBuiltInValue() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let limiter = RateLimiter(clock: clock)
        var section = ConfigSection(path: "email", values: ["sends_per_ip": .object(["limit": .number(1), "window": .number(3600)])])
        let rule = try section.rule("sends_per_ip", default: RateLimitRule(limit: 3, window: 3600))
        #expect(try await limiter.attempt(rule, key: "k") == nil)
        #expect(try await limiter.attempt(rule, key: "k") != nil)
        // The new file allows 2: counters start over, then the new limit holds.
        await limiter.reload(root: ["email": .object(["sends_per_ip": .object(["limit": .number(2), "window": .number(3600)])])], clearCounters: true)
        #expect(try await limiter.attempt(rule, key: "k") == nil)
        #expect(try await limiter.attempt(rule, key: "k") == nil)
        #expect(try await limiter.attempt(rule, key: "k") != nil)
        // Removed from the file: the built-in 3.
        await limiter.reload(root: [:], clearCounters: true)
        for _ in 0..<3 { #expect(try await limiter.attempt(rule, key: "k") == nil) }
        #expect(try await limiter.attempt(rule, key: "k") != nil)
        // An unnamed rule is never changed by a reload.
        let fixed = RateLimitRule(limit: 1, window: 60)
        #expect(try await limiter.attempt(fixed, key: "f") == nil)
        #expect(try await limiter.attempt(fixed, key: "f") != nil)
    }
}
