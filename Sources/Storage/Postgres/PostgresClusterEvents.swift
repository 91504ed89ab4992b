import AuthKernel
package import Foundation
import Logging
import PostgresNIO

/// Cluster events over PostgreSQL's LISTEN/NOTIFY on the channel `authd_events`.
///
/// A payload is `approval <instance> <user id> <approval id>` or `keys <instance>`; an instance
/// skips its own (it has already acted). Listening holds one pooled connection and reconnects after
/// a failure; events sent while it was away are lost, which the protocol allows (see ``ClusterEvents``).
package struct PostgresClusterEvents: ClusterEvents {
    let store: PostgresStore
    /// This process, so it can skip its own notifications.
    let instance = UUID().uuidString.lowercased()
    static let channel = "authd_events"

    /// Events through `store`'s database.
    package init(store: PostgresStore) { self.store = store }

    package func publishApproval(id: String, userID: UUID) async {
        await notify("approval \(instance) \(userID.uuidString.lowercased()) \(id)")
    }

    package func publishKeysChanged() async {
        await notify("keys \(instance)")
    }

    private func notify(_ payload: String) async {
        do {
            try await store.client.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: store.logger)
        } catch {
            store.logger.warning("could not notify the other instances", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    package func listen(
        onApproval: @escaping @Sendable (String, UUID) async -> Void, onKeysChanged: @escaping @Sendable () async -> Void
    ) async {
        while !Task.isCancelled {
            do {
                try await store.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        for try await notification in notifications {
                            let parts = notification.payload.split(separator: " ").map(String.init)
                            guard parts.count >= 2, parts[1] != instance else { continue }
                            switch parts[0] {
                            case "approval" where parts.count == 4:
                                if let user = UUID(uuidString: parts[2]) { await onApproval(parts[3], user) }
                            case "keys":
                                await onKeysChanged()
                            default:
                                continue
                            }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                store.logger.warning("lost the database notification channel; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
            }
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }
}
