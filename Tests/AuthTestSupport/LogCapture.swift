import Foundation
package import Logging
import Synchronization

/// Collects every log line (message and metadata) in memory, so tests can assert what was never logged.
package final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// Creates an empty capture.
    package init() {}

    /// A logger at trace level writing here.
    package func logger(label: String = "authd-test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Everything captured so far.
    package var all: [String] { lines.withLock { $0 } }

    /// Whether any line contains `text`.
    package func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }

    /// Whether a line containing `text` is logged within `timeout` (for lines logged after the
    /// answer that prompted them, by another task).
    package func eventuallyContains(_ text: String, within timeout: Duration = .seconds(2)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !contains(text) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append("\(event.level) \(event.message) \(merged)")
        }
    }
}
