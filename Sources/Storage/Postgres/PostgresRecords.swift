import AuthKernel
import Foundation
import Logging
import PostgresNIO

/// The SQL behind each ``StoreKey`` (rows to load) and each ``StoreChange`` (rows to write).
///
/// Records travel as the same JSON documents the file store journals; the other columns exist for
/// lookups, uniqueness and cascades, and are derived from the record on every write.
enum PostgresRecords {
    // MARK: Loading

    /// Loads the rows `key` names into `state`; `lock` takes row locks (`FOR UPDATE`) for a write.
    static func load(_ key: StoreKey, into state: inout StoreState, on connection: PostgresConnection, lock: Bool, logger: Logger) async throws {
        // PostgreSQL text cannot hold NUL, so nothing stored has one: a lookup by such a value (a
        // client's user name, say) finds nothing, as on the file store, instead of failing.
        guard !key.hasNUL else { return }
        let forUpdate = lock ? "FOR UPDATE" : ""
        switch key {
        case .user(let id):
            try await users("SELECT record::text FROM users WHERE id = \(id) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .userByEmail(let email):
            try await users("SELECT record::text FROM users WHERE email = \(email) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .userByUsername(let name):
            try await users("SELECT record::text FROM users WHERE username_key = \(name.lowercased()) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .userByIdentity(let identity):
            try await users(
                """
                SELECT u.record::text FROM users u JOIN user_auth_providers p ON p.user_id = u.id
                WHERE p.provider = \(identity.provider) AND p.provider_user_id = \(identity.subject) \(unescaped: lock ? "FOR UPDATE OF u" : "")
                """, into: &state, connection, logger)
        case .allUsers:
            try await users("SELECT record::text FROM users", into: &state, connection, logger)
        case .session(let id):
            try await sessions("SELECT record::text FROM sessions WHERE id = \(id) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .sessionByRefreshHash(let hash):
            try await sessions(
                """
                SELECT s.record::text FROM user_tokens t JOIN sessions s ON s.id = t.family
                WHERE t.token_hash = \(hash) \(unescaped: lock ? "FOR UPDATE OF s" : "")
                """, into: &state, connection, logger)
        case .sessionsOfUser(let userID):
            try await sessions("SELECT record::text FROM sessions WHERE user_id = \(userID) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .allSessions:
            try await sessions("SELECT record::text FROM sessions", into: &state, connection, logger)
        case .code(let purpose, let key):
            let id = CodeRecord.id(purpose: purpose, key: key)
            try await codes("SELECT record::text FROM verification_codes WHERE id = \(id) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .allCodes:
            try await codes("SELECT record::text FROM verification_codes", into: &state, connection, logger)
        case .codesExpired(let before):
            try await codes("SELECT record::text FROM verification_codes WHERE expires_at <= \(before) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .approval(let id):
            try await approvals("SELECT record::text FROM approvals WHERE id = \(id) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .approvalsOfUser(let userID):
            try await approvals("SELECT record::text FROM approvals WHERE user_id = \(userID) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .allApprovals:
            try await approvals("SELECT record::text FROM approvals", into: &state, connection, logger)
        case .approvalsExpired(let before):
            try await approvals("SELECT record::text FROM approvals WHERE expires_at < \(before) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .job(let id):
            try await jobs("SELECT record::text FROM jobs WHERE id = \(id) \(unescaped: forUpdate)", into: &state, connection, logger)
        case .allJobs:
            try await jobs("SELECT record::text FROM jobs", into: &state, connection, logger)
        }
    }

    private static func records<T: Decodable>(
        _ type: T.Type, _ query: PostgresQuery, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [T] {
        let decoder = StoreCoding.decoder()
        var found: [T] = []
        for try await text in try await connection.query(query, logger: logger).decode(String.self) {
            found.append(try decoder.decode(T.self, from: Data(text.utf8)))
        }
        return found
    }

    private static func users(_ q: PostgresQuery, into state: inout StoreState, _ c: PostgresConnection, _ l: Logger) async throws {
        for user in try await records(UserRecord.self, q, c, l) { state.load(.putUser(user)) }
    }
    private static func sessions(_ q: PostgresQuery, into state: inout StoreState, _ c: PostgresConnection, _ l: Logger) async throws {
        for session in try await records(SessionRecord.self, q, c, l) { state.load(.putSession(session)) }
    }
    private static func codes(_ q: PostgresQuery, into state: inout StoreState, _ c: PostgresConnection, _ l: Logger) async throws {
        for code in try await records(CodeRecord.self, q, c, l) { state.load(.putCode(code)) }
    }
    private static func approvals(_ q: PostgresQuery, into state: inout StoreState, _ c: PostgresConnection, _ l: Logger) async throws {
        for approval in try await records(ApprovalRecord.self, q, c, l) { state.load(.putApproval(approval)) }
    }
    private static func jobs(_ q: PostgresQuery, into state: inout StoreState, _ c: PostgresConnection, _ l: Logger) async throws {
        for job in try await records(JobRecord.self, q, c, l) { state.load(.putJob(job)) }
    }

    // MARK: Writing


    /// Writes one change.
    static func apply(_ change: StoreChange, on connection: PostgresConnection, logger: Logger) async throws {
        switch change {
        case .putUser(let user):
            let record = try json(user)
            try await connection.query(
                """
                INSERT INTO users (id, email, username_key, created_at, record)
                VALUES (\(user.id), \(user.email), \(user.username?.lowercased()), \(user.createdAt), \(record)::jsonb)
                ON CONFLICT (id) DO UPDATE SET email = excluded.email, username_key = excluded.username_key, record = excluded.record
                """, logger: logger)
            // Identities: drop the ones the user no longer has, add the new ones (another user's is a unique violation).
            let providers = user.identities.map(\.provider), subjects = user.identities.map(\.subject)
            try await connection.query(
                """
                DELETE FROM user_auth_providers WHERE user_id = \(user.id)
                AND (provider, provider_user_id) NOT IN (SELECT * FROM unnest(\(providers)::text[], \(subjects)::text[]))
                """, logger: logger)
            // Only the new ones are inserted: one that another user holds fails its primary key (a 409).
            try await connection.query(
                """
                INSERT INTO user_auth_providers (provider, provider_user_id, user_id)
                SELECT p, s, \(user.id) FROM unnest(\(providers)::text[], \(subjects)::text[]) AS i(p, s)
                WHERE NOT EXISTS (
                    SELECT 1 FROM user_auth_providers x WHERE x.provider = i.p AND x.provider_user_id = i.s AND x.user_id = \(user.id))
                """, logger: logger)
        case .deleteUser(let id):
            // The codes sent to its email go with it; sessions, tokens, identities and approvals cascade.
            try await connection.query(
                "DELETE FROM verification_codes WHERE key = (SELECT email FROM users WHERE id = \(id))", logger: logger)
            try await connection.query("DELETE FROM users WHERE id = \(id)", logger: logger)
        case .putSession(let session):
            let record = try json(session)
            try await connection.query(
                """
                INSERT INTO sessions (id, user_id, created_at, expires_at, record)
                VALUES (\(session.id), \(session.userID), \(session.createdAt), \(session.expiresAt), \(record)::jsonb)
                ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record
                """, logger: logger)
            // The token family: current hashes (rotated_at NULL) and recently rotated ones.
            let hashes = session.refreshHashes + session.retired.map(\.hash)
            // Seconds since 1970, -1 for "not rotated" (an array of optionals does not bind).
            let rotated: [Double] = session.refreshHashes.map { _ in -1 } + session.retired.map(\.retiredAt.timeIntervalSince1970)
            try await connection.query(
                "DELETE FROM user_tokens WHERE family = \(session.id) AND token_hash <> ALL(\(hashes)::text[])", logger: logger)
            try await connection.query(
                """
                INSERT INTO user_tokens (token_hash, family, user_id, rotated_at)
                SELECT h, \(session.id), \(session.userID), to_timestamp(nullif(r, -1))
                FROM unnest(\(hashes)::text[], \(rotated)::float8[]) AS t(h, r)
                ON CONFLICT (token_hash) DO UPDATE SET rotated_at = excluded.rotated_at
                """, logger: logger)
        case .deleteSession(let id):
            try await connection.query("DELETE FROM sessions WHERE id = \(id)", logger: logger)
        case .putCode(let code):
            let record = try json(code)
            try await connection.query(
                """
                INSERT INTO verification_codes (id, purpose, key, expires_at, record)
                VALUES (\(code.id), \(code.purpose), \(code.key), \(code.expiresAt), \(record)::jsonb)
                ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record
                """, logger: logger)
        case .deleteCode(let id):
            try await connection.query("DELETE FROM verification_codes WHERE id = \(id)", logger: logger)
        case .putApproval(let approval):
            let record = try json(approval)
            try await connection.query(
                """
                INSERT INTO approvals (id, user_id, expires_at, record)
                VALUES (\(approval.id), \(approval.userID), \(approval.currentExpiry), \(record)::jsonb)
                ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record
                """, logger: logger)
        case .deleteApproval(let id):
            try await connection.query("DELETE FROM approvals WHERE id = \(id)", logger: logger)
        case .putJob(let job):
            let record = try json(job)
            try await connection.query(
                """
                INSERT INTO jobs (id, run_after, record) VALUES (\(job.id), \(job.runAfter), \(record)::jsonb)
                ON CONFLICT (id) DO UPDATE SET run_after = excluded.run_after, record = excluded.record
                """, logger: logger)
        case .deleteJob(let id):
            try await connection.query("DELETE FROM jobs WHERE id = \(id)", logger: logger)
        }
    }

    private static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try StoreCoding.encoder().encode(value), as: UTF8.self)
    }
}

extension StoreKey {
    /// Whether a text part of the key holds a NUL character.
    var hasNUL: Bool {
        let texts: [String] =
            switch self {
            case .userByEmail(let s), .userByUsername(let s), .sessionByRefreshHash(let s), .approval(let s): [s]
            case .userByIdentity(let identity): [identity.provider, identity.subject]
            case .code(let purpose, let key): [purpose, key]
            default: []
            }
        return texts.contains { $0.contains("\u{0}") }
    }
}
