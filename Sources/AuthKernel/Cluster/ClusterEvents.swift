package import Foundation

/// News between the instances that share one store: a new approval request (its subscribers may be
/// connected to another instance) and rotated signing keys (every instance's JWKS must agree).
///
/// Delivery is best effort, like the events themselves: an approval stream that misses one still
/// finds the request in `GET /approvals`, and instances also re-read the keys every minute.
package protocol ClusterEvents: Sendable {
    /// Tells the other instances about a new approval request of `userID`.
    func publishApproval(id: String, userID: UUID) async
    /// Tells every instance that the signing keys changed.
    func publishKeysChanged() async
    /// Receives the other instances' events until cancelled (reconnecting as needed).
    func listen(
        onApproval: @escaping @Sendable (_ id: String, _ userID: UUID) async -> Void,
        onKeysChanged: @escaping @Sendable () async -> Void
    ) async
}
