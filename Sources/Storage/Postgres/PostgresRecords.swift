import AuthStorage
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
        var binds = PostgresBindings()
        guard let sql = try select(key, binds: &binds, lock: lock) else { return }
        try await load(PostgresQuery(unsafeSQL: sql, binds: binds), into: &state, on: connection, logger: logger)
    }

    /// Loads the rows of every key in one round trip (a read takes no locks, so the selects can be
    /// one `UNION ALL`).
    static func load(_ keys: [StoreKey], into state: inout StoreState, on connection: PostgresConnection, logger: Logger) async throws {
        var binds = PostgresBindings()
        let parts = try keys.compactMap { try select($0, binds: &binds, lock: false) }
        guard !parts.isEmpty else { return }
        let sql = parts.count == 1 ? parts[0] : parts.map { "(\($0))" }.joined(separator: " UNION ALL ")
        try await load(PostgresQuery(unsafeSQL: sql, binds: binds), into: &state, on: connection, logger: logger)
    }

    /// Rows of `(kind, record)`: `u` user, `s` session, `c` code, `a` approval, `j` job.
    private static func load(_ query: PostgresQuery, into state: inout StoreState, on connection: PostgresConnection, logger: Logger) async throws {
        let decoder = StoreCoding.decoder()
        for try await (kind, text) in try await connection.query(query, logger: logger).decode((String, String).self) {
            let data = Data(text.utf8)
            switch kind {
            case "u": state.load(.putUser(try decoder.decode(UserRecord.self, from: data)))
            case "s": state.load(.putSession(try decoder.decode(SessionRecord.self, from: data)))
            case "c": state.load(.putCode(try decoder.decode(CodeRecord.self, from: data)))
            case "a": state.load(.putApproval(try decoder.decode(ApprovalRecord.self, from: data)))
            default: state.load(.putJob(try decoder.decode(JobRecord.self, from: data)))
            }
        }
    }

    /// The SELECT for one key, its values appended to `binds`; nil when no row can match (a NUL:
    /// PostgreSQL text cannot hold one, so nothing stored has one, and the file store finds nothing too).
    static func select(_ key: StoreKey, binds: inout PostgresBindings, lock: Bool) throws -> String? {
        guard !key.hasNUL else { return nil }
        func bind<Value: PostgresThrowingDynamicTypeEncodable>(_ value: Value) throws -> String {
            try binds.append(value)
            return "$\(binds.count)"
        }
        let forUpdate = lock ? " FOR UPDATE" : ""
        switch key {
        case .user(let id):
            return "SELECT 'u', record::text FROM users WHERE id = \(try bind(id))\(forUpdate)"
        case .userByEmail(let email):
            return "SELECT 'u', record::text FROM users WHERE email = \(try bind(email))\(forUpdate)"
        case .userByUsername(let name):
            return "SELECT 'u', record::text FROM users WHERE username_key = \(try bind(name.lowercased()))\(forUpdate)"
        case .userByIdentity(let identity):
            return """
                SELECT 'u', u.record::text FROM users u JOIN user_auth_providers p ON p.user_id = u.id
                WHERE p.provider = \(try bind(identity.provider)) AND p.provider_user_id = \(try bind(identity.subject))\(lock ? " FOR UPDATE OF u" : "")
                """
        case .allUsers:
            return "SELECT 'u', record::text FROM users"
        case .usersPage(let query, let after, let limit):
            // strpos, not LIKE: the query's % and _ are literal. Emails are stored case-folded, user names lowered.
            var sql = "SELECT 'u', record::text FROM users WHERE true"
            if !query.isEmpty {
                let q = try bind(query)
                sql += " AND (strpos(coalesce(email, ''), \(q)) > 0 OR strpos(coalesce(username_key, ''), \(q)) > 0)"
            }
            if let after { sql += " AND id > \(try bind(after))" }
            return sql + " ORDER BY id LIMIT \(max(0, min(limit, 1000)))"
        case .session(let id):
            return "SELECT 's', record::text FROM sessions WHERE id = \(try bind(id))\(forUpdate)"
        case .sessionByRefreshHash(let hash):
            return """
                SELECT 's', s.record::text FROM user_tokens t JOIN sessions s ON s.id = t.family
                WHERE t.token_hash = \(try bind(hash))\(lock ? " FOR UPDATE OF s" : "")
                """
        case .sessionsOfUser(let userID):
            return "SELECT 's', record::text FROM sessions WHERE user_id = \(try bind(userID))\(forUpdate)"
        case .allSessions:
            return "SELECT 's', record::text FROM sessions"
        case .sessionsExpired(let before):
            return """
                SELECT 's', s.record::text FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.expires_at <= \(try bind(before))
                AND NOT ((u.record->>'is_anonymous')::boolean AND jsonb_array_length(u.record->'identities') = 0)
                LIMIT \(StorePurge.batch)\(lock ? " FOR UPDATE OF s SKIP LOCKED" : "")
                """
        case .anonymousUsersIdle(let before):
            return """
                SELECT 'u', u.record::text FROM users u
                WHERE (u.record->>'is_anonymous')::boolean AND jsonb_array_length(u.record->'identities') = 0
                AND (u.record->>'updated_at')::float8 < \(try bind(before.timeIntervalSince1970))
                AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id AND s.expires_at > \(try bind(before)))
                LIMIT \(StorePurge.batch)\(lock ? " FOR UPDATE OF u SKIP LOCKED" : "")
                """
        case .code(let purpose, let key):
            return "SELECT 'c', record::text FROM verification_codes WHERE id = \(try bind(CodeRecord.id(purpose: purpose, key: key)))\(forUpdate)"
        case .allCodes:
            return "SELECT 'c', record::text FROM verification_codes"
        case .codesOfPurpose(let purpose):
            return "SELECT 'c', record::text FROM verification_codes WHERE purpose = \(try bind(purpose))\(forUpdate)"
        case .codesExpired(let before):
            return "SELECT 'c', record::text FROM verification_codes WHERE expires_at <= \(try bind(before))\(forUpdate)"
        case .approval(let id):
            return "SELECT 'a', record::text FROM approvals WHERE id = \(try bind(id))\(forUpdate)"
        case .approvalsOfUser(let userID):
            return "SELECT 'a', record::text FROM approvals WHERE user_id = \(try bind(userID))\(forUpdate)"
        case .allApprovals:
            return "SELECT 'a', record::text FROM approvals"
        case .approvalsExpired(let before):
            return "SELECT 'a', record::text FROM approvals WHERE expires_at < \(try bind(before))\(forUpdate)"
        case .job(let id):
            return "SELECT 'j', record::text FROM jobs WHERE id = \(try bind(id))\(forUpdate)"
        case .allJobs:
            return "SELECT 'j', record::text FROM jobs"
        }
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
        case .rotateSession:
            // Rows, not a journal: the store asks for whole records (`takeChanges(wholeRecords: true)`).
            preconditionFailure("a session rotation reached the PostgreSQL rows")
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
            case .codesOfPurpose(let purpose): [purpose]
            case .usersPage(let query, _, _): [query]
            default: []
            }
        return texts.contains { $0.contains("\u{0}") }
    }
}
