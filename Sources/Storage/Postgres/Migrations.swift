import AuthStorage
import Foundation
import Logging
import PostgresNIO

/// The schema, as numbered SQL migrations applied in order by `authd migrate`.
///
/// A server refuses to start unless the database is at exactly ``latest``: older means someone
/// forgot `authd migrate`, newer means this binary is too old for the data. Migrations only ever get
/// appended; a released one is never edited.
enum Migrations {
    /// The schema version this build reads and writes.
    static var latest: Int { all.last!.version }

    /// Every migration, oldest first.
    static let all: [(version: Int, name: String, sql: String)] = [
        (1, "initial schema", """
            CREATE TABLE users (
                id uuid PRIMARY KEY,
                email text CONSTRAINT users_email_unique UNIQUE,
                username_key text CONSTRAINT users_username_unique UNIQUE,  -- the user name, lowercased
                created_at timestamptz NOT NULL,
                record jsonb NOT NULL                                       -- the UserRecord, as in the file store
            );
            CREATE TABLE user_auth_providers (
                provider text NOT NULL,
                provider_user_id text NOT NULL,
                user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                PRIMARY KEY (provider, provider_user_id)
            );
            CREATE INDEX user_auth_providers_user_id ON user_auth_providers (user_id);
            CREATE TABLE sessions (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                record jsonb NOT NULL
            );
            CREATE INDEX sessions_user_id ON sessions (user_id);
            -- Refresh tokens by SHA-256; the family is the session; rotated_at is set once a token is rotated out
            -- (reusing it after the grace revokes the family).
            CREATE TABLE user_tokens (
                token_hash text PRIMARY KEY,
                family uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                rotated_at timestamptz
            );
            CREATE INDEX user_tokens_family ON user_tokens (family);
            CREATE TABLE verification_codes (
                id text PRIMARY KEY,                                        -- purpose:key
                purpose text NOT NULL,
                key text NOT NULL,
                expires_at timestamptz NOT NULL,
                record jsonb NOT NULL                                       -- holds only a keyed hash of the code
            );
            CREATE INDEX verification_codes_key ON verification_codes (key);
            CREATE INDEX verification_codes_expires_at ON verification_codes (expires_at);
            CREATE TABLE approvals (
                id text PRIMARY KEY,
                user_id uuid REFERENCES users(id) ON DELETE CASCADE,        -- NULL for a decoy request
                expires_at timestamptz NOT NULL,
                record jsonb NOT NULL
            );
            CREATE INDEX approvals_user_id ON approvals (user_id);
            CREATE INDEX approvals_expires_at ON approvals (expires_at);
            CREATE TABLE jobs (
                id uuid PRIMARY KEY,
                run_after timestamptz NOT NULL,
                record jsonb NOT NULL
            );
            CREATE INDEX jobs_run_after ON jobs (run_after);
            -- GCRA: one theoretical arrival time per key, seconds since 1970.
            CREATE TABLE rate_limits (
                key text PRIMARY KEY,
                tat double precision NOT NULL
            );
            CREATE INDEX rate_limits_tat ON rate_limits (tat);
            -- Ed25519 keys; the private half sealed with the key-encryption key every instance has.
            CREATE TABLE signing_keys (
                kid text PRIMARY KEY,
                created_at timestamptz NOT NULL,
                retired_at timestamptz,
                sealed_key text NOT NULL                                    -- SecretBox(KEK) of the key file JSON
            );
            -- Server secrets (code HMAC key, PIN pepper…), sealed the same way.
            CREATE TABLE server_secrets (
                name text PRIMARY KEY,
                sealed text NOT NULL
            );
            """),
        (2, "shared decoy accounts", """
            -- Lock state of accounts that do not exist, shared by the instances, so an unknown account
            -- locks after as many tries as a known one however the tries are spread.
            CREATE TABLE decoy_accounts (
                key text PRIMARY KEY,                                       -- provider NUL email or user name
                record jsonb NOT NULL,
                touched timestamptz NOT NULL
            );
            CREATE INDEX decoy_accounts_touched ON decoy_accounts (touched);
            """),
    ]

    /// A script's statements, one by one (the extended query protocol takes one at a time): comments
    /// dropped, split at semicolons (the migrations have none inside strings).
    static func statements(_ sql: String) -> [String] {
        let code = sql.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }.joined(separator: "\n")
        return code.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// The version the database is at: 0 when authd never migrated it.
    static func currentVersion(_ connection: PostgresConnection, logger: Logger) async throws -> Int {
        let exists = try await connection.query("SELECT to_regclass('authd_schema') IS NOT NULL", logger: logger)
        for try await found in exists.decode(Bool.self) where !found { return 0 }
        let rows = try await connection.query("SELECT coalesce(max(version), 0) FROM authd_schema", logger: logger)
        for try await version in rows.decode(Int.self) { return version }
        return 0
    }

    /// Applies the missing migrations, each in its own transaction, under an advisory lock so two
    /// instances migrating at once do not race. Returns the versions applied.
    static func apply(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(7245771)", logger: logger)
            do {
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS authd_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
                    logger: logger)
                var current = 0
                for try await v in try await connection.query("SELECT coalesce(max(version), 0) FROM authd_schema", logger: logger).decode(Int.self) {
                    current = v
                }
                guard current <= latest else {
                    throw PostgresStoreError("the database schema is at version \(current), newer than this authd knows (\(latest))")
                }
                var applied: [Int] = []
                for migration in all where migration.version > current {
                    try await connection.withTransaction(logger: logger) { tx in
                        for statement in statements(migration.sql) {
                            try await tx.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                        }
                        try await tx.query(
                            "INSERT INTO authd_schema (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                    }
                    logger.notice("database migrated", metadata: ["schema.version": "\(migration.version)", "schema.migration": "\(migration.name)"])
                    applied.append(migration.version)
                }
                try await connection.query("SELECT pg_advisory_unlock(7245771)", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(7245771)", logger: logger)
                throw error
            }
        }
    }
}
