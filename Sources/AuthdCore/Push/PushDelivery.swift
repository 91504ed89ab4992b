package import Foundation

/// Sends an alert to one device: APNs in the full server (`AuthdServer`), which brings its HTTP/2
/// client and ES256 provider tokens; the core and the test kit carry none of that.
package protocol PushDelivery: Sendable {
    /// Sends `payload` (JSON) to `deviceToken` for `topic`, expiring at `expiration`.
    func send(deviceToken: String, environment: String, topic: String, payload: [UInt8], expiration: Date, now: Date) async -> PushOutcome
    /// Closes connections at shutdown.
    func shutdown() async
}

/// What a push service answered.
package enum PushOutcome: Equatable, Sendable {
    case sent
    /// The token is no longer valid (APNs 410, or 400 `BadDeviceToken`); forget it.
    case gone
    case failed(String)
}
