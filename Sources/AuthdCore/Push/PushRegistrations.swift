import AuthKernel
import AuthStorage
import Foundation

/// The APNs tokens a user's sessions registered (`PUT /sessions/current/push`): one record per
/// user, kept with the codes under purpose `push`, by session id. A session that has ended is
/// skipped when pushing and dropped at the next change.
struct PushRegistrations: Sendable {
    static let purpose = "push"
    let store: any AuthStore
    let clock: any AuthClock

    struct Registration: Sendable, Equatable {
        var sessionID: String
        var token: String
        var environment: String
        var topic: String?
    }

    /// Registers (or replaces) the token of `sessionID`, dropping registrations of ended sessions.
    func register(_ registration: Registration, userID: UUID) async throws {
        let now = clock.now()
        let key = userID.lowercased
        try await store.write([.code(purpose: Self.purpose, key: key), .sessionsOfUser(userID)]) { state in
            let live = Set(state.sessions(userID: userID).filter { $0.expiresAt > now }.map { $0.id.lowercased })
            var entries = Self.entries(state.code(purpose: Self.purpose, key: key)).filter { live.contains($0.sessionID) && $0.sessionID != registration.sessionID }
            entries.append(registration)
            state.put(Self.record(key: key, entries: entries, now: now))
        }
    }

    /// Removes the token of `sessionID`, or every registration of `token` (APNs said it is gone).
    func remove(userID: UUID, sessionID: String? = nil, token: String? = nil) async throws {
        let now = clock.now()
        let key = userID.lowercased
        try await store.write([.code(purpose: Self.purpose, key: key)]) { state in
            guard let record = state.code(purpose: Self.purpose, key: key) else { return }
            let entries = Self.entries(record).filter { $0.sessionID != sessionID && $0.token != token }
            if entries.isEmpty { state.deleteCode(id: record.id) } else { state.put(Self.record(key: key, entries: entries, now: now)) }
        }
    }

    /// Forgets every registration of a user (the account is deleted).
    func removeAll(userID: UUID) async throws {
        let key = userID.lowercased
        try await store.write([.code(purpose: Self.purpose, key: key)]) { $0.deleteCode(id: CodeRecord.id(purpose: Self.purpose, key: key)) }
    }

    /// The registrations of the user's live, full sessions (limited ones get no approval pushes).
    func targets(of userID: UUID) async throws -> [Registration] {
        let now = clock.now()
        let key = userID.lowercased
        return try await store.read([.code(purpose: Self.purpose, key: key), .sessionsOfUser(userID)]) { state in
            let full = Set(state.sessions(userID: userID).filter { $0.expiresAt > now && !$0.isLimited }.map { $0.id.lowercased })
            return Self.entries(state.code(purpose: Self.purpose, key: key)).filter { full.contains($0.sessionID) }
        }
    }

    private static func entries(_ record: CodeRecord?) -> [Registration] {
        guard case .array(let items)? = record?.payload?["sessions"] else { return [] }
        return items.compactMap { item in
            guard case .object(let o) = item, case .string(let session) = o["session_id"], case .string(let token) = o["token"],
                case .string(let environment) = o["environment"]
            else { return nil }
            var topic: String?
            if case .string(let t) = o["topic"] { topic = t }
            return Registration(sessionID: session, token: token, environment: environment, topic: topic)
        }
    }

    private static func record(key: String, entries: [Registration], now: Date) -> CodeRecord {
        let items: [JSONValue] = entries.map { r in
            var o: [String: JSONValue] = ["session_id": .string(r.sessionID), "token": .string(r.token), "environment": .string(r.environment)]
            if let topic = r.topic { o["topic"] = .string(topic) }
            return .object(o)
        }
        return CodeRecord(purpose: purpose, key: key, digest: "", sentAt: now, expiresAt: SessionRecord.neverExpires, payload: ["sessions": .array(items)])
    }
}
