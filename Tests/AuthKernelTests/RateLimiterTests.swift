import AuthKernel
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
