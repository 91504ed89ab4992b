import Synchronization

/// A fault-injection hook for tests of disk trouble: makes journal writes (and the store's
/// recovery probe) fail as a full disk would.
public final class StoreFaults: Sendable {
    private struct Plan {
        var full = false
        var writesBeforeFull = 0
    }
    private let plan = Mutex(Plan())

    /// Creates a hook that injects nothing until told to.
    public init() {}

    /// Fills the disk (after `writes` more successful writes, if given): every write then fails
    /// with `ENOSPC` until ``setDiskFull(_:afterWrites:)`` is called with `false`.
    public func setDiskFull(_ isFull: Bool, afterWrites writes: Int = 0) {
        plan.withLock {
            $0.full = isFull
            $0.writesBeforeFull = isFull ? writes : 0
        }
    }

    func shouldFail() -> Bool {
        plan.withLock { plan in
            guard plan.full else { return false }
            if plan.writesBeforeFull > 0 {
                plan.writesBeforeFull -= 1
                return false
            }
            return true
        }
    }
}
