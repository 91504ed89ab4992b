import Synchronization

/// The `iss` of access tokens. Fixed by the configuration, except that the default issuer of a
/// server started on port 0 is only known once the port is bound (``AuthServer`` then names it).
package final class IssuerName: Sendable {
    private let name: Mutex<String>

    /// Creates the name.
    package init(_ name: String) { self.name = Mutex(name) }

    /// The current name.
    package var value: String { name.withLock { $0 } }

    /// Replaces the name (before the first token is issued).
    package func set(_ value: String) { name.withLock { $0 = value } }
}
