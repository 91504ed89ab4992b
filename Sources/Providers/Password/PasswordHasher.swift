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
        try await parameters.hash(password, on: pool)
    }

    /// Whether `password` matches `hash`; with no hash, verifies against the dummy and returns false.
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let ok = try await Argon2id.verify(password, hash: hash ?? dummyHash, on: pool)
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
