import Synchronization

/// Settings a provider doubts without refusing to start (a passkey RP ID that is not the issuer's
/// domain, say): logged at start-up, listed by `authd check`, which then exits non-zero.
public final class ConfigurationProblems: Sendable {
    private let problems = Mutex<[String]>([])

    package init() {}

    /// Records a problem: one sentence naming the key and what is wrong.
    public func report(_ problem: String) {
        problems.withLock { $0.append(problem) }
    }

    /// The problems reported, in order.
    public var all: [String] { problems.withLock { $0 } }
}
