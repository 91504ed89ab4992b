import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A fault-injection hook for tests of disk trouble: makes journal writes (and the store's
/// recovery probe) fail as a full disk would, refuses to reserve journal space as a nearly full
/// one would, or holds snapshots (a compaction's, a backup's) as
/// a slow encode of a large store would.
package final class StoreFaults: Sendable {
    private struct Plan {
        var full = false
        var writesBeforeFull = 0
        var holdSnapshots = false
        var heldSnapshots = 0
        var refuseReservations = false
        var failAfterCompaction = false
        var failNextWrite = false
    }
    private let plan = Mutex(Plan())

    /// Creates a hook that injects nothing until told to.
    package init() {}

    /// Fills the disk (after `writes` more successful writes, if given): every write then fails
    /// with `ENOSPC` until ``setDiskFull(_:afterWrites:)`` is called with `false`.
    package func setDiskFull(_ isFull: Bool, afterWrites writes: Int = 0) {
        plan.withLock {
            $0.full = isFull
            $0.writesBeforeFull = isFull ? writes : 0
        }
    }

    /// While true, reserving journal space fails (as `posix_fallocate` of a MiB does on a disk with
    /// less free), and batches are written past the reserved end, growing the file.
    package func refuseReservations(_ refuse: Bool) {
        plan.withLock { $0.refuseReservations = refuse }
    }

    package var refusesReservations: Bool { plan.withLock { $0.refuseReservations } }

    /// While true, the first journal write after each compaction starts fails (once), as a disk
    /// filling up at that moment would.
    package func failFirstWriteAfterCompaction(_ fail: Bool) {
        plan.withLock { $0.failAfterCompaction = fail }
    }

    /// Called by the store when a compaction takes its snapshot of the state.
    package func compactionStarts() {
        plan.withLock { if $0.failAfterCompaction { $0.failNextWrite = true } }
    }

    /// While true, every snapshot the store starts to encode waits (on its thread) until it is false again.
    package func holdSnapshots(_ hold: Bool) {
        plan.withLock { $0.holdSnapshots = hold }
    }

    /// Snapshots waiting now because of ``holdSnapshots(_:)``.
    package var heldSnapshots: Int { plan.withLock { $0.heldSnapshots } }

    /// Called by the store on the thread that is about to encode a snapshot.
    package func snapshotStarts() {
        guard plan.withLock({ p in
            guard p.holdSnapshots else { return false }
            p.heldSnapshots += 1
            return true
        }) else { return }
        while plan.withLock({ $0.holdSnapshots }) { usleep(1000) }
        plan.withLock { $0.heldSnapshots -= 1 }
    }

    package func shouldFail() -> Bool {
        plan.withLock { plan in
            if plan.failNextWrite {
                plan.failNextWrite = false
                return true
            }
            guard plan.full else { return false }
            if plan.writesBeforeFull > 0 {
                plan.writesBeforeFull -= 1
                return false
            }
            return true
        }
    }
}
