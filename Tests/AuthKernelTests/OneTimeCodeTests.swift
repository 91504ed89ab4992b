@testable import FileStore
@testable import AuthStorage
@testable import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Logging
import Testing

struct OneTimeCodeTests {
    let policy = CodePolicy(ttl: 300, resendInterval: 60, maxAttempts: 3, maxFailures: 5, failureWindow: 3600)

    func withCodes(_ body: (OneTimeCodeService, ManualClock, JournalStore) async throws -> Void) async throws {
        let store = try await JournalStore.open(folder: temporaryFolder(), logger: Logger(label: "test"))
        let clock = ManualClock()
        do {
            try await body(OneTimeCodeService(store: store, secret: SecureRandom.bytes(32), clock: clock), clock, store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    func expectError(_ expected: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(expected)")
        } catch let error as AuthError {
            #expect(error.code == expected)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aCodeWorksOnceAndIsStoredOnlyAsAKeyedHash() async throws {
        try await withCodes { codes, _, store in
            let code = try await codes.issue(purpose: "p", key: "a@b.c", policy: policy)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            let record = store.read { $0.code(purpose: "p", key: "a@b.c") }
            #expect(record?.digest.contains(code) == false)
            #expect(record?.digest != Hex.encode(SHA256.hash(code)))  // keyed: not a plain hash either
            try await codes.verify(purpose: "p", key: "a@b.c", code: code, policy: policy)
            await expectError("INVALID_CODE") { try await codes.verify(purpose: "p", key: "a@b.c", code: code, policy: policy) }
        }
    }

    @Test func aCodeExpires() async throws {
        try await withCodes { codes, clock, _ in
            let code = try await codes.issue(purpose: "p", key: "k", policy: policy)
            clock.advance(by: 300)
            await expectError("INVALID_CODE") { try await codes.verify(purpose: "p", key: "k", code: code, policy: policy) }
        }
    }

    @Test func maxAttemptsKillTheCode() async throws {
        try await withCodes { codes, _, _ in
            let code = try await codes.issue(purpose: "p", key: "k", policy: policy)
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<3 {
                await expectError("INVALID_CODE") { try await codes.verify(purpose: "p", key: "k", code: wrong, policy: policy) }
            }
            // Even the right code is refused once the attempts are used up.
            await expectError("INVALID_CODE") { try await codes.verify(purpose: "p", key: "k", code: code, policy: policy) }
        }
    }

    @Test func resendIntervalSaysHowLongToWait() async throws {
        try await withCodes { codes, clock, _ in
            _ = try await codes.issue(purpose: "p", key: "k", policy: policy)
            clock.advance(by: 45)
            do {
                _ = try await codes.issue(purpose: "p", key: "k", policy: policy)
                Issue.record("resent too early")
            } catch let error as AuthError {
                #expect(error.status == .tooManyRequests)
                #expect(error.retryAfter == 15)
            }
            clock.advance(by: 15)
            let second = try await codes.issue(purpose: "p", key: "k", policy: policy)
            try await codes.verify(purpose: "p", key: "k", code: second, policy: policy)
        }
    }

    @Test func aResendReplacesTheCodeButKeepsTheFailureCount() async throws {
        try await withCodes { codes, clock, _ in
            var code = ""
            // Two wrong tries per code, resending each time: the per-key window still closes at 5.
            for round in 0..<3 {
                code = try await codes.issue(purpose: "p", key: "k", policy: policy)
                let wrong = code == "000000" ? "111111" : "000000"
                for _ in 0..<2 where round * 2 < 5 {
                    do { try await codes.verify(purpose: "p", key: "k", code: wrong, policy: policy) } catch {}
                }
                clock.advance(by: 60)
            }
            do {
                try await codes.verify(purpose: "p", key: "k", code: code, policy: policy)
                Issue.record("the failure window did not hold")
            } catch let error as AuthError {
                #expect(error.code == "RATE_LIMIT_EXCEEDED")
                #expect((error.retryAfter ?? 0) > 3000)
            }
        }
    }

    @Test func expiredCodesArePurged() async throws {
        try await withCodes { codes, clock, store in
            _ = try await codes.issue(purpose: "p", key: "k", policy: policy)
            #expect(try await codes.purgeExpired() == 0)
            clock.advance(by: 301)
            #expect(try await codes.purgeExpired() == 1)
            #expect(store.read { $0.codes.isEmpty })
        }
    }
}
