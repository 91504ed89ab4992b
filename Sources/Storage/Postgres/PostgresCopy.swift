import AuthStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// An import's records into an empty database with `COPY … FROM STDIN`, table by table: a million
/// users took an hour as one statement each, and `COPY` streams them at the database's own pace.
///
/// Only whole records (puts) travel this way; the rows derived from them (identities, the token
/// family of each session) are copied beside them, as `authd_apply` writes them.
enum PostgresCopy {
    /// Whether every change of a batch can be copied (an import's snapshot holds only puts).
    static func canCopy(_ changes: [StoreChange]) -> Bool {
        changes.allSatisfy { change in
            switch change {
            case .putUser, .putSession, .putCode, .putApproval, .putJob: true
            default: false
            }
        }
    }

    /// Copies `changes` into their tables, users first; one `COPY` per table that has rows.
    static func copy(_ changes: [StoreChange], on connection: CountedConnection, logger: Logger) async throws {
        var users = Rows(), identities = Rows(), sessions = Rows(), tokens = Rows(), codes = Rows(), approvals = Rows(), jobs = Rows()
        for change in changes {
            switch change {
            case .putUser(let user):
                users.row([user.id.lowercased, user.email, user.username?.lowercased(), timestamp(user.createdAt), try json(user)])
                for identity in user.identities { identities.row([identity.provider, identity.subject, user.id.lowercased]) }
            case .putSession(let session):
                let id = session.id.lowercased, owner = session.userID.lowercased
                sessions.row([id, owner, timestamp(session.createdAt), timestamp(session.expiresAt), try json(session)])
                for hash in session.refreshHashes { tokens.row([hash, id, owner, nil]) }
                for retired in session.retired { tokens.row([retired.hash, id, owner, timestamp(retired.retiredAt)]) }
            case .putCode(let code):
                codes.row([code.id, code.purpose, code.key, timestamp(code.expiresAt), try json(code)])
            case .putApproval(let approval):
                approvals.row([approval.id, approval.userID?.lowercased, timestamp(approval.currentExpiry), try json(approval)])
            case .putJob(let job):
                jobs.row([job.id.lowercased, timestamp(job.runAfter), try json(job)])
            default:
                preconditionFailure("only puts are copied")
            }
        }
        let tables: [(String, [String], Rows)] = [
            ("users", ["id", "email", "username_key", "created_at", "record"], users),
            ("user_auth_providers", ["provider", "provider_user_id", "user_id"], identities),
            ("sessions", ["id", "user_id", "created_at", "expires_at", "record"], sessions),
            ("user_tokens", ["token_hash", "family", "user_id", "rotated_at"], tokens),
            ("verification_codes", ["id", "purpose", "key", "expires_at", "record"], codes),
            ("approvals", ["id", "user_id", "expires_at", "record"], approvals),
            ("jobs", ["id", "run_after", "record"], jobs),
        ]
        for (table, columns, rows) in tables where rows.count > 0 {
            try await connection.copy(into: table, columns: columns, rows.buffer, logger: logger)
        }
    }

    /// Rows in `COPY`'s text format: tab-separated, `\N` for null, backslash escapes.
    struct Rows {
        var buffer = ByteBuffer()
        var count = 0

        mutating func row(_ values: [String?]) {
            for (i, value) in values.enumerated() {
                if i > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
                guard let value else {
                    buffer.writeStaticString("\\N")
                    continue
                }
                write(value)
            }
            buffer.writeInteger(UInt8(ascii: "\n"))
            count += 1
        }

        /// `text` with `\\`, tab, newline and carriage return escaped; written whole when none occurs
        /// (nearly always), else a run at a time between them.
        private mutating func write(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                let raw = UnsafeRawBufferPointer(bytes)
                var start = 0
                for (i, byte) in bytes.enumerated() where byte == 0x5C || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                    buffer.writeBytes(UnsafeRawBufferPointer(rebasing: raw[start..<i]))
                    switch byte {
                    case 0x5C: buffer.writeStaticString("\\\\")
                    case 0x09: buffer.writeStaticString("\\t")
                    case 0x0A: buffer.writeStaticString("\\n")
                    default: buffer.writeStaticString("\\r")
                    }
                    start = i + 1
                }
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: raw[start...]))
            }
        }
    }

    private static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try StoreCoding.encoder().encode(value), as: UTF8.self)
    }

    /// `2026-11-28 11:05:00.123456+00`, as a `timestamptz` column reads it (microseconds, as PostgreSQL keeps them).
    static func timestamp(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = time_t(micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000)
        let fraction = Int(micros - Int64(seconds) * 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let micro = String(fraction)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))."
            + String(repeating: "0", count: 6 - micro.count) + micro + "+00"
    }
}

extension CountedConnection {
    /// One `COPY table (columns) FROM STDIN` with `rows`: one round trip for the statement, counted
    /// with the copies.
    func copy(into table: String, columns: [String], _ rows: ByteBuffer, logger: Logger) async throws {
        counter.add()
        counter.addCopy()
        try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
            try await writer.write(rows)
        }
    }
}
