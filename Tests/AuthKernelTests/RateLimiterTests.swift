import AuthKernel
import Foundation
import HTTPTypes
import Testing

struct RateLimiterTests {
    @Test func exactUnderConcurrency() async {
        let limiter = RateLimiter(clock: ManualClock())
        let rule = RateLimitRule(limit: 1, window: 60)
        let allowed = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { limiter.attempt(rule, key: "k") == nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 1)
    }

    @Test func exactForLargerLimitUnderConcurrency() async {
        let limiter = RateLimiter(clock: ManualClock())
        let rule = RateLimitRule(limit: 7, window: 60)
        let allowed = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<100 { group.addTask { limiter.attempt(rule, key: "k") == nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 7)
    }

    @Test func saysHowLongToWaitAndRefills() throws {
        let clock = ManualClock()
        let limiter = RateLimiter(clock: clock)
        let rule = RateLimitRule(limit: 2, window: 60)
        #expect(limiter.attempt(rule, key: "k") == nil)
        #expect(limiter.attempt(rule, key: "k") == nil)
        #expect(limiter.attempt(rule, key: "k") == 30)
        #expect(limiter.attempt(rule, key: "other") == nil)
        clock.advance(by: 29.5)
        #expect(limiter.attempt(rule, key: "k") == 1)
        clock.advance(by: 0.5)
        #expect(limiter.attempt(rule, key: "k") == nil)
        #expect(throws: AuthError.self) { try limiter.consume(rule, key: "k") }
        do {
            try limiter.consume(rule, key: "k")
        } catch {
            #expect(error.status == .tooManyRequests)
            #expect(error.retryAfter == 30)
        }
        limiter.reset(key: "k")
        #expect(limiter.attempt(rule, key: "k") == nil)
    }
}
