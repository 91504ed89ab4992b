public import Foundation
import Synchronization

/// Where the kernel reads the time; tests substitute ``ManualClock`` to step over expiries without sleeping.
public protocol AuthClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemClock: AuthClock {
    /// Creates the clock.
    public init() {}
    /// The system time.
    public func now() -> Date { Date() }
}

/// A clock that moves only when told to.
public final class ManualClock: AuthClock {
    private let current: Mutex<Date>

    /// Creates a clock showing `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

    /// The time it is set to.
    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
