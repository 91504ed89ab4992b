import AuthStorage
import AuthKernel
package import Foundation
import Logging
import PostgresNIO

/// Cluster events over PostgreSQL's LISTEN/NOTIFY on the channel `authd_events`.
///
/// A payload is `approval <instance> <user id> <approval id>`, `keys <instance>`,
/// `inv <instance> <row>…` (rows a write changed or ended: `u`, `U` (deleted) or `s` and an id, `c` and a
/// code's id in hex, sent by
/// `authd_apply` as the write commits) or `hb <instance>`, the instance's own heartbeat. An instance
/// skips the events it sent itself (it has already acted) but for its heartbeat.
///
/// Listening holds one connection of its own, outside the pool, and sends the heartbeat every second
/// on it. Its coming back proves every earlier notification arrived, so it is what lets the record
/// cache answer; a missed heartbeat or a lost connection drops the cache, and the listener reconnects.
/// Approval and key events sent while it was away are lost, which the protocol allows (see ``ClusterEvents``).
package struct PostgresClusterEvents: ClusterEvents {
    let store: PostgresStore
    static let channel = "authd_events"
    /// Seconds between heartbeats.
    static let heartbeatInterval: Duration = .seconds(1)
    /// Seconds without a heartbeat back after which the connection is replaced.
    static let silenceLimit = 5.0
    /// Largest payload sent (PostgreSQL's limit is 8000 bytes).
    static let payloadLimit = 7000

    /// Events through `store`'s database.
    package init(store: PostgresStore) { self.store = store }

    var instance: String { store.instance }

    package func publishApproval(id: String, userID: UUID) async {
        await notify("approval \(instance) \(userID.uuidString.lowercased()) \(id)")
    }

    package func publishKeysChanged() async {
        await notify("keys \(instance)")
    }

    private func notify(_ payload: String) async {
        do {
            try await store.withConnection { _ = try await $0.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: store.logger) }
        } catch {
            store.logger.warning("could not notify the other instances", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// The `inv` payloads for `rows`, each within the payload limit.
    static func invalidations(_ rows: [String], from instance: String) -> [String] {
        guard !rows.isEmpty else { return [] }
        let head = "inv \(instance)"
        var payloads: [String] = [], current = head
        for row in rows {
            if current.utf8.count + 1 + row.utf8.count > payloadLimit {
                payloads.append(current)
                current = head
            }
            current += " " + row
        }
        payloads.append(current)
        return payloads
    }

    package func listen(
        onApproval: @escaping @Sendable (String, UUID) async -> Void, onKeysChanged: @escaping @Sendable () async -> Void
    ) async {
        let cache = store.cache, instance = self.instance, logger = store.logger
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(configuration: store.connectionConfiguration, id: 1, logger: logger)
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: Self.channel) { notifications in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            // The heartbeat: sent on this connection, so it comes back behind every
                            // notification committed before it.
                            while true {
                                try await connection.query("SELECT pg_notify(\(Self.channel), \("hb " + instance))", logger: logger)
                                try await Task.sleep(for: Self.heartbeatInterval)
                            }
                        }
                        group.addTask {
                            // A connection that stopped answering without an error (a host gone
                            // silent) is given up for a new one once heartbeats stop coming back.
                            var connectedAt = ContinuousClock.now
                            while true {
                                try await Task.sleep(for: Self.heartbeatInterval)
                                if let quiet = cache.secondsSinceHeartbeat {
                                    connectedAt = ContinuousClock.now
                                    if quiet > Self.silenceLimit { throw ListenerEnded() }
                                } else if ContinuousClock.now - connectedAt > .seconds(Self.silenceLimit) {
                                    throw ListenerEnded()
                                }
                            }
                        }
                        group.addTask {
                            for try await notification in notifications {
                                let parts = notification.payload.split(separator: " ").map(String.init)
                                guard parts.count >= 2 else { continue }
                                if parts[0] == "hb" {
                                    if parts[1] == instance { cache.heartbeat() }
                                    continue
                                }
                                guard parts[1] != instance else { continue }
                                switch parts[0] {
                                case "inv":
                                    Self.invalidate(parts.dropFirst(2), in: cache)
                                case "approval" where parts.count == 4:
                                    if let user = UUID(uuidString: parts[2]) { await onApproval(parts[3], user) }
                                case "keys":
                                    await onKeysChanged()
                                default:
                                    continue
                                }
                            }
                            throw ListenerEnded()
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
            } catch {
                cache.drop()
                if Task.isCancelled { return }
                logger.warning("lost the database notification channel; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
            }
            cache.drop()
            do { try await Task.sleep(for: .milliseconds(500)) } catch { return }
        }
    }

    /// The notification stream finished: the connection is gone.
    struct ListenerEnded: Error {}

    /// Drops the rows an `inv` payload names.
    static func invalidate(_ rows: ArraySlice<String>, in cache: PostgresRecordCache) {
        var keys: [RowKey] = [], deletedUsers: [UUID] = []
        for row in rows {
            guard let kind = row.first else { continue }
            let rest = String(row.dropFirst())
            if kind == "c" {
                if let bytes = Hex.decode(rest) { keys.append(.code(String(decoding: bytes, as: UTF8.self))) }
                continue
            }
            guard let id = UUID(uuidString: rest) else { continue }
            switch kind {
            case "u": keys.append(.user(id))
            case "U":
                keys.append(.user(id))
                deletedUsers.append(id)
            case "s": keys.append(.session(id))
            default: continue
            }
        }
        cache.invalidate(keys, deletedUsers: deletedUsers)
    }
}
