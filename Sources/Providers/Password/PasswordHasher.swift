public import AuthKernel
import NIOPosix
import Synchronization

/// Argon2id on a thread pool of its own, `max_concurrent_hashes` wide: hashing never runs on an event
/// loop, memory stays bounded (at most that many hashes at once), and further requests queue.
public final class PasswordHasher: Sendable {
    /// The parameters new hashes use.
    public let parameters: Argon2id
    let pool: NIOThreadPool
    /// A hash of a random password, verified against when the account does not exist so that
    /// unknown and known emails take the same time.
    let dummyHash: String
    private let verifications = Atomic<Int>(0)

    /// Argon2id verifications run so far, the dummy's included: the work a sign-in does, which tests
    /// count where they would otherwise time it (an unknown email must cost one, as a known one does).
    package var verificationCount: Int { verifications.load(ordering: .relaxed) }

    private let started = Atomic<Int>(0)

    /// Starts the pool and computes the dummy hash.
    public init(parameters: Argon2id, threads: Int) throws {
        self.parameters = parameters
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        dummyHash = try parameters.hash(Base64URL.encode(SecureRandom.bytes(16)))
    }

    /// The hashes and checks asked of the pool so far (the dummy's included): the work a test
    /// counts to see that unknown and known accounts cost the same.
    package var hashesStarted: Int { started.load(ordering: .relaxed) }

    /// The PHC string of `password`.
    public func hash(_ password: String) async throws -> String {
        started.add(1, ordering: .relaxed)
        let parameters = self.parameters
        return try await pool.runIfActive {
            HashingThread.yieldToEventLoops()
            return try parameters.hash(password)
        }
    }

    /// Whether `password` matches `hash`; with no hash, verifies against the dummy and returns false.
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        started.add(1, ordering: .relaxed)
        let phc = hash ?? dummyHash
        verifications.add(1, ordering: .relaxed)
        let ok = try await pool.runIfActive {
            HashingThread.yieldToEventLoops()
            return Argon2id.verify(password, hash: phc)
        }
        return hash != nil && ok
    }

    /// Whether `password`, as typed, matches a hash imported from another system (bcrypt, Django's
    /// PBKDF2, Argon2): on the pool, as every hash.
    public func verifyImported(_ password: String, hash: String) async throws -> Bool {
        started.add(1, ordering: .relaxed)
        return try await pool.runIfActive {
            HashingThread.yieldToEventLoops()
            return ImportedPasswordHash.verify(password, hash: hash)
        }
    }

    /// Whether `hash` was made with other parameters than the current ones.
    public func needsRehash(_ hash: String) -> Bool {
        (try? parameters.needsRehash(hash)) ?? true
    }

    /// Stops the pool.
    public func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}

/// Hashing threads run in Linux's idle scheduling class (`SCHED_IDLE`): they get the CPU the event
/// loops leave, and a loop thread that wakes takes its core back at once. At nice 10 (before) the
/// scheduler let a hash finish its time slice first, and under a login storm (b)'s p99 rose to 2.6-3.3 ×
/// its p99 without one (docs/benchmarks.md). Where the class is refused, nice 19.
enum HashingThread {
    private static let done = ThreadSpecificVariable<Box>()
    private final class Box: Sendable {}

    /// `SCHED_IDLE` from `<linux/sched.h>` (Glibc exposes it only with `_GNU_SOURCE`).
    static let idlePolicy: Int32 = 5

    static func yieldToEventLoops() {
        #if os(Linux)
        guard done.currentValue == nil else { return }
        done.currentValue = Box()
        // On Linux the policy and the nice value are per thread; 0 names the calling one.
        var param = sched_param(sched_priority: 0)
        if sched_setscheduler(0, idlePolicy, &param) != 0 {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        }
        #endif
    }
}

#if canImport(Glibc)
import Glibc
#endif
