import Foundation
public import InMemoryLogging
public import Logging

/// Every log line of a ``TestHarness``'s server, kept in memory by swift-log's
/// `InMemoryLogHandler`, so a test can assert what was logged and what never was (a code, a PIN).
public struct LogCapture: Sendable {
    private let handler = InMemoryLogHandler()

    /// Creates an empty capture.
    public init() {}

    /// A logger at trace level writing here.
    public func logger(label: String = "authd-test") -> Logger {
        var logger = Logger(label: label) { _ in handler }
        logger.logLevel = .trace
        return logger
    }

    /// The entries captured so far, in order.
    public var entries: [InMemoryLogHandler.Entry] { handler.entries }

    /// Each entry as one line: level, message and metadata.
    public var all: [String] {
        entries.map { "\($0.level) \($0.message) \($0.metadata)" }
    }

    /// Whether any line contains `text`.
    public func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }

    /// How many lines contain `text`.
    public func count(_ text: String) -> Int { all.filter { $0.contains(text) }.count }

    /// Whether a line containing `text` is logged within `timeout` (for lines logged after the
    /// answer that prompted them, by another task). Returns as soon as it is; the default minute is
    /// only there so that a line never logged fails the test instead of hanging it, even on a loaded machine.
    public func eventuallyContains(_ text: String, within timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !contains(text) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}
