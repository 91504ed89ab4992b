import AuthKernel
import Foundation

/// What a "not me" left on the account (contract §15): networks whose requests are decoys until a
/// time, and when pushes of sign-in requests may resume. Kept in the user's record, so every
/// instance sees it and a restart keeps it.
struct ApprovalBlocks: Codable, Sendable, Equatable {
    /// The user record's key.
    static let key = "approval"
    /// Most networks kept: the oldest block goes first.
    static let maxNetworks = 32

    /// Network → until when (seconds since 1970).
    var networks: [String: Double] = [:]
    /// No pushes of sign-in requests before this time (seconds since 1970).
    var quietUntil: Double?

    enum CodingKeys: String, CodingKey { case networks, quietUntil = "quiet_until" }

    /// Whether requests from `network` are decoys at `now`.
    func blocks(_ network: String, at now: Date) -> Bool {
        (networks[network] ?? 0) > now.timeIntervalSince1970
    }

    /// Whether pushes are quiet at `now`.
    func isQuiet(at now: Date) -> Bool { (quietUntil ?? 0) > now.timeIntervalSince1970 }

    /// Blocks `network` and quiets pushes; drops what has ended.
    mutating func notMe(network: String?, now: Date, block: Int, quiet: Int) {
        let t = now.timeIntervalSince1970
        networks = networks.filter { $0.value > t }
        if let network { networks[network] = t + Double(block) }
        while networks.count > Self.maxNetworks, let oldest = networks.min(by: { $0.value < $1.value }) { networks[oldest.key] = nil }
        quietUntil = max(quietUntil ?? 0, t + Double(quiet))
    }
}
