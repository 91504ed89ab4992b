import AuthKernel
import NIOCore
import NIOPosix
@testable import PasswordProvider
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A login storm must not delay the event loops: hashes run in the idle scheduling class.
struct HashingThreadTests {
    @Test func hashesRunInTheIdleSchedulingClassOffTheCallersThread() async throws {
        #if os(Linux)
        let hasher = try PasswordHasher(parameters: Argon2id(opsLimit: 2, memLimit: 19_456 * 1024), threads: 1)
        let hash = try await hasher.hash("a password for the test")
        #expect(try await hasher.verify("a password for the test", hash: hash))
        // The pool's one thread did the hashing above; it stays in the class for later hashes.
        let policy = try await hasher.pool.runIfActive { sched_getscheduler(0) }
        #expect(policy == HashingThread.idlePolicy)
        #expect(sched_getscheduler(0) != HashingThread.idlePolicy)  // the caller's thread is untouched
        await hasher.shutdown()
        #endif
    }

    @Test func byDefaultHashesLeaveOneCoreToTheEventLoops() throws {
        var section = ConfigSection(path: "password", values: [:])
        #expect(try PasswordSettings(&section).maxConcurrentHashes == max(1, System.coreCount - 1))
        var set = ConfigSection(path: "password", values: ["max_concurrent_hashes": .number(8)])
        #expect(try PasswordSettings(&set).maxConcurrentHashes == 8)
    }
}
