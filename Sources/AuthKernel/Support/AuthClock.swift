public import Foundation
import Synchronization

/// Where the kernel reads the time; tests substitute ``ManualClock`` to step over expiries without sleeping.
public protocol AuthClock: Sendable {
    /// The current time.
    func now() -> Date

    /// Returns once the clock shows `deadline` (at once when it already does): how an answer is held
    /// back until a time, e.g. a refused sign-in until its floor, so that a test sees the time asked
    /// for instead of waiting for it.
    /// - Throws: `CancellationError` when the task is cancelled first.
    func sleep(until deadline: Date) async throws
}

extension AuthClock {
    /// Sleeps for what is left until `deadline` by ``now()``.
    public func sleep(until deadline: Date) async throws {
        let left = deadline.timeIntervalSince(now())
        guard left > 0 else { return }
        try await Task.sleep(for: .seconds(left))
    }
}

/// The system's wall clock.
public struct SystemClock: AuthClock {
    /// Creates the clock.
    public init() {}
    /// The system time.
    public func now() -> Date { Date() }
}

/// A clock that moves only when told to, or when something sleeps on it.
public final class ManualClock: AuthClock {
    private let current: Mutex<Date>
    private let asked = Mutex<[Date]>([])

    /// Creates a clock showing `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

    /// The time it is set to.
    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }

    /// Records `deadline` in ``sleeps`` and moves the clock to it when it is later, then returns: the
    /// sleeper wakes at once, at the time it asked for, so a test neither waits nor races, and what
    /// happens after the sleep happens at that time.
    public func sleep(until deadline: Date) async {
        asked.withLock { $0.append(deadline) }
        current.withLock { $0 = max($0, deadline) }
    }

    /// Every deadline ``sleep(until:)`` was asked for, in order.
    public var sleeps: [Date] { asked.withLock { $0 } }
}
