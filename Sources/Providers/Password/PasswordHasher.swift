public import AuthKernel
public import NIOPosix

/// Argon2id on a thread pool of its own, `max_concurrent_hashes` wide: hashing never runs on an event
/// loop, memory stays bounded (at most that many hashes at once), and further requests queue.
public final class PasswordHasher: Sendable {
    /// The parameters new hashes use.
    public let parameters: Argon2id
    let pool: NIOThreadPool
    /// A hash of a random password, verified against when the account does not exist so that
    /// unknown and known emails take the same time.
    let dummyHash: String

    /// Starts the pool and computes the dummy hash.
    public init(parameters: Argon2id, threads: Int) throws {
        self.parameters = parameters
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        dummyHash = try parameters.hash(Base64URL.encode(SecureRandom.bytes(16)))
    }

    /// The PHC string of `password`.
    public func hash(_ password: String) async throws -> String {
        let parameters = self.parameters
        return try await pool.runIfActive {
            HashingThread.yieldToEventLoops()
            return try parameters.hash(password)
        }
    }

    /// Whether `password` matches `hash`; with no hash, verifies against the dummy and returns false.
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let phc = hash ?? dummyHash
        let ok = try await pool.runIfActive {
            HashingThread.yieldToEventLoops()
            return Argon2id.verify(password, hash: phc)
        }
        return hash != nil && ok
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

/// Hashing threads run at a lower scheduling priority (nice 10) than the event loops: a login storm
/// then takes the CPU the loops leave, instead of delaying every other request.
enum HashingThread {
    private static let done = ThreadSpecificVariable<Box>()
    private final class Box: Sendable {}

    static func yieldToEventLoops() {
        #if os(Linux)
        guard done.currentValue == nil else { return }
        done.currentValue = Box()
        // On Linux the nice value is per thread; 0 names the calling one.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }
}

#if canImport(Glibc)
import Glibc
#endif
