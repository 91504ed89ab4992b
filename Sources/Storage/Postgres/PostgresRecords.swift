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

    /// Loads the rows `key` names; `lock` takes row locks (`FOR UPDATE`) for a write.
    static func load(_ key: StoreKey, on connection: CountedConnection, lock: Bool, logger: Logger) async throws -> [VersionedRow] {
        var binds = PostgresBindings()
        guard let sql = try select(key, binds: &binds, lock: lock) else { return [] }
        return try await load(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, logger: logger)
    }

    /// Loads the rows of every key in one round trip (a read takes no locks, so the selects can be
    /// one `UNION ALL`, one snapshot).
    static func load(_ keys: [StoreKey], on connection: CountedConnection, logger: Logger) async throws -> [VersionedRow] {
        var binds = PostgresBindings()
        let parts = try keys.compactMap { try select($0, binds: &binds, lock: false) }
        guard !parts.isEmpty else { return [] }
        let sql = parts.count == 1 ? parts[0] : parts.map { "(\($0))" }.joined(separator: " UNION ALL ")
        return try await load(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, logger: logger)
    }

    /// Rows of `(kind, version, record)`: `u` user, `s` session, `c` code, `a` approval, `j` job.
    static func load(_ query: PostgresQuery, on connection: CountedConnection, logger: Logger) async throws -> [VersionedRow] {
        let decoder = StoreCoding.decoder()
        var rows: [VersionedRow] = []
        for try await (kind, version, text) in try await connection.query(query, logger: logger).decode((String, Int64, String).self) {
            let data = Data(text.utf8)
            switch kind {
            case "u":
                let user = try decoder.decode(UserRecord.self, from: data)
                rows.append(VersionedRow(key: .user(user.id), record: .putUser(user), version: version))
            case "s":
                let session = try decoder.decode(SessionRecord.self, from: data)
                rows.append(VersionedRow(key: .session(session.id), record: .putSession(session), version: version))
            case "c":
                let code = try decoder.decode(CodeRecord.self, from: data)
                rows.append(VersionedRow(key: .code(code.id), record: .putCode(code), version: version))
            case "a":
                let approval = try decoder.decode(ApprovalRecord.self, from: data)
                rows.append(VersionedRow(key: .approval(approval.id), record: .putApproval(approval), version: version))
            default:
                let job = try decoder.decode(JobRecord.self, from: data)
                rows.append(VersionedRow(key: .job(job.id), record: .putJob(job), version: version))
            }
        }
        return rows
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
            return "SELECT 'u', version, record::text FROM users WHERE id = \(try bind(id))\(forUpdate)"
        case .userByEmail(let email):
            return "SELECT 'u', version, record::text FROM users WHERE email = \(try bind(email))\(forUpdate)"
        case .userByUsername(let name):
            return "SELECT 'u', version, record::text FROM users WHERE username_key = \(try bind(name.lowercased()))\(forUpdate)"
        case .userByIdentity(let identity):
            return """
                SELECT 'u', u.version, u.record::text FROM users u JOIN user_auth_providers p ON p.user_id = u.id
                WHERE p.provider = \(try bind(identity.provider)) AND p.provider_user_id = \(try bind(identity.subject))\(lock ? " FOR UPDATE OF u" : "")
                """
        case .allUsers:
            return "SELECT 'u', version, record::text FROM users"
        case .usersPage(let query, let after, let limit):
            // strpos, not LIKE: the query's % and _ are literal. Emails are stored case-folded, user names lowered.
            var sql = "SELECT 'u', version, record::text FROM users WHERE true"
            if !query.isEmpty {
                let q = try bind(query)
                sql += " AND (strpos(coalesce(email, ''), \(q)) > 0 OR strpos(coalesce(username_key, ''), \(q)) > 0)"
            }
            if let after { sql += " AND id > \(try bind(after))" }
            return sql + " ORDER BY id LIMIT \(max(0, min(limit, 1000)))"
        case .session(let id):
            return "SELECT 's', version, record::text FROM sessions WHERE id = \(try bind(id))\(forUpdate)"
        case .sessionByRefreshHash(let hash), .sessionToRotate(let hash):
            return """
                SELECT 's', s.version, s.record::text FROM user_tokens t JOIN sessions s ON s.id = t.family
                WHERE t.token_hash = \(try bind(hash))\(lock ? " FOR UPDATE OF s" : "")
                """
        case .sessionsOfUser(let userID):
            return "SELECT 's', version, record::text FROM sessions WHERE user_id = \(try bind(userID))\(forUpdate)"
        case .allSessions:
            return "SELECT 's', version, record::text FROM sessions"
        case .sessionsExpired(let before):
            return """
                SELECT 's', s.version, s.record::text FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.expires_at <= \(try bind(before))
                AND NOT ((u.record->>'is_anonymous')::boolean AND jsonb_array_length(u.record->'identities') = 0)
                LIMIT \(StorePurge.batch)\(lock ? " FOR UPDATE OF s SKIP LOCKED" : "")
                """
        case .anonymousUsersIdle(let before):
            return """
                SELECT 'u', u.version, u.record::text FROM users u
                WHERE (u.record->>'is_anonymous')::boolean AND jsonb_array_length(u.record->'identities') = 0
                AND (u.record->>'updated_at')::float8 < \(try bind(before.timeIntervalSince1970))
                AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id AND s.expires_at > \(try bind(before)))
                LIMIT \(StorePurge.batch)\(lock ? " FOR UPDATE OF u SKIP LOCKED" : "")
                """
        case .code(let purpose, let key):
            return "SELECT 'c', version, record::text FROM verification_codes WHERE id = \(try bind(CodeRecord.id(purpose: purpose, key: key)))\(forUpdate)"
        case .allCodes:
            return "SELECT 'c', version, record::text FROM verification_codes"
        case .codesOfPurpose(let purpose):
            return "SELECT 'c', version, record::text FROM verification_codes WHERE purpose = \(try bind(purpose))\(forUpdate)"
        case .codesExpired(let before):
            return "SELECT 'c', version, record::text FROM verification_codes WHERE expires_at <= \(try bind(before))\(forUpdate)"
        case .approval(let id):
            return "SELECT 'a', version, record::text FROM approvals WHERE id = \(try bind(id))\(forUpdate)"
        case .approvalsOfUser(let userID):
            return "SELECT 'a', version, record::text FROM approvals WHERE user_id = \(try bind(userID))\(forUpdate)"
        case .allApprovals:
            return "SELECT 'a', version, record::text FROM approvals"
        case .approvalsExpired(let before):
            return "SELECT 'a', version, record::text FROM approvals WHERE expires_at < \(try bind(before))\(forUpdate)"
        case .job(let id):
            return "SELECT 'j', version, record::text FROM jobs WHERE id = \(try bind(id))\(forUpdate)"
        case .allJobs:
            return "SELECT 'j', version, record::text FROM jobs"
        }
    }

    // MARK: Writing

    /// One call of `authd_apply` (migration 3): the versions of the rows read without a lock, which
    /// must not have changed; the changes as whole records, with the columns derived from them; the
    /// notifications to send when it commits. One round trip, one transaction.
    struct Apply {
        var checks = JSONWriter(capacity: 256)
        var changes = JSONWriter(capacity: 4096)
        var notices: [String] = []
        /// The row each change writes, in order (nil: a delete), for the versions the call returns.
        var written: [RowKey?] = []
        /// Rows the changes delete, and users deleted (their sessions go too).
        var deleted: [RowKey] = []
        /// The record each change puts, in order (nil: a delete).
        private var records: [StoreChange?] = []
        private(set) var checkCount = 0

        init() {
            checks.beginArray()
            changes.beginArray()
        }

        /// A row read without a lock, at `version`.
        mutating func check(_ key: RowKey, version: Int64) {
            checkCount += 1
            checks.beginArray()
            switch key {
            case .user(let id): checks.string("u"); checks.uuid(id)
            case .session(let id): checks.string("s"); checks.uuid(id)
            case .code(let id): checks.string("c"); checks.string(id)
            case .approval(let id): checks.string("a"); checks.string(id)
            case .job(let id): checks.string("j"); checks.uuid(id)
            }
            checks.int(Int(version))
            checks.endArray()
        }

        /// One change, a whole record or a delete.
        mutating func add(_ change: StoreChange) throws {
            var w = JSONWriter(capacity: 2048)
            w.beginArray()
            switch change {
            case .putUser(let user):
                w.string("u"); w.uuid(user.id); w.raw(try json(user))
                w.string(user.email); w.string(user.username?.lowercased()); w.double(user.createdAt.timeIntervalSince1970)
                w.beginArray()
                for identity in user.identities { w.strings([identity.provider, identity.subject]) }
                w.endArray()
                written.append(.user(user.id))
            case .deleteUser(let id):
                w.string("U"); w.uuid(id)
                written.append(nil)
                deleted.append(.user(id))
            case .putSession(let session):
                w.string("s"); w.uuid(session.id); w.raw(try json(session))
                w.uuid(session.userID); w.double(session.createdAt.timeIntervalSince1970); w.double(session.expiresAt.timeIntervalSince1970)
                // The token family: current hashes (not rotated) and recently rotated ones.
                w.beginArray()
                for hash in session.refreshHashes {
                    w.beginArray(); w.string(hash); w.string(nil); w.endArray()
                }
                for retired in session.retired {
                    w.beginArray(); w.string(retired.hash); w.double(retired.retiredAt.timeIntervalSince1970); w.endArray()
                }
                w.endArray()
                written.append(.session(session.id))
            case .deleteSession(let id):
                w.string("S"); w.uuid(id)
                written.append(nil)
                deleted.append(.session(id))
            case .rotateSession:
                // Rows, not a journal: the store asks for whole records (`takeChanges(wholeRecords: true)`).
                preconditionFailure("a session rotation reached the PostgreSQL rows")
            case .putCode(let code):
                w.string("c"); w.string(code.id); w.raw(try json(code))
                w.string(code.purpose); w.string(code.key); w.double(code.expiresAt.timeIntervalSince1970)
                written.append(.code(code.id))
            case .deleteCode(let id):
                w.string("C"); w.string(id)
                written.append(nil)
                deleted.append(.code(id))
            case .putApproval(let approval):
                w.string("a"); w.string(approval.id); w.raw(try json(approval))
                if let user = approval.userID { w.uuid(user) } else { w.string(nil) }
                w.double(approval.currentExpiry.timeIntervalSince1970)
                written.append(.approval(approval.id))
            case .deleteApproval(let id):
                w.string("A"); w.string(id)
                written.append(nil)
                deleted.append(.approval(id))
            case .putJob(let job):
                w.string("j"); w.uuid(job.id); w.raw(try json(job)); w.double(job.runAfter.timeIntervalSince1970)
                written.append(.job(job.id))
            case .deleteJob(let id):
                w.string("J"); w.uuid(id)
                written.append(nil)
                deleted.append(.job(id))
            }
            w.endArray()
            changes.raw(w.bytes)
            switch change {
            case .putUser, .putSession, .putCode, .putApproval, .putJob: records.append(change)
            default: records.append(nil)
            }
        }

        /// The rows as written, with the versions the call gave them.
        func rows(versions: [Int64?]) -> [VersionedRow] {
            var rows: [VersionedRow] = []
            for (i, key) in written.enumerated() {
                guard let key, let record = records[i], i < versions.count, let version = versions[i] else { continue }
                rows.append(VersionedRow(key: key, record: record, version: version))
            }
            return rows
        }

        /// The call, and the round trip: the version of each written row, in order.
        func run(on connection: CountedConnection, logger: Logger) async throws -> [Int64?] {
            var checks = self.checks, changes = self.changes
            checks.endArray()
            changes.endArray()
            let checkText = String(decoding: checks.bytes, as: UTF8.self), changeText = String(decoding: changes.bytes, as: UTF8.self)
            let rows = try await connection.query(
                "SELECT authd_apply(\(checkText)::jsonb, \(changeText)::jsonb, \(notices)::text[])::text", logger: logger)
            var versions: [Int64?] = []
            for try await text in rows.decode(String.self) {
                let numbers = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] ?? []
                versions = numbers.map { ($0 as? NSNumber)?.int64Value }
            }
            return versions
        }
    }

    static func json<T: Encodable>(_ value: T) throws -> [UInt8] {
        Array(try StoreCoding.encoder().encode(value))
    }
}

extension StoreKey {
    /// Whether a text part of the key holds a NUL character.
    var hasNUL: Bool {
        let texts: [String] =
            switch self {
            case .userByEmail(let s), .userByUsername(let s), .sessionByRefreshHash(let s), .sessionToRotate(let s), .approval(let s): [s]
            case .userByIdentity(let identity): [identity.provider, identity.subject]
            case .code(let purpose, let key): [purpose, key]
            case .codesOfPurpose(let purpose): [purpose]
            case .usersPage(let query, _, _): [query]
            default: []
            }
        return texts.contains { $0.contains("\u{0}") }
    }
}
