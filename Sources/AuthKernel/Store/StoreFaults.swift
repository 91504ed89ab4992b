import Synchronization

/// A fault-injection hook for tests of disk trouble: makes the next journal write fail as a full disk would.
public final class StoreFaults: Sendable {
    private let failWrites = Atomic<Int>(0)

    /// Creates a hook that injects nothing until told to.
    public init() {}

    /// Makes the next `count` journal writes fail with `ENOSPC`.
    public func failNextWrites(_ count: Int = 1) { failWrites.store(count, ordering: .sequentiallyConsistent) }

    func shouldFail() -> Bool {
        while true {
            let n = failWrites.load(ordering: .sequentiallyConsistent)
            if n <= 0 { return false }
            if failWrites.compareExchange(expected: n, desired: n - 1, ordering: .sequentiallyConsistent).exchanged { return true }
        }
    }
}
