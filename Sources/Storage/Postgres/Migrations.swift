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
        (3, "versions, unlogged counters, one-round-trip writes", """
            -- Each record's version, moved on by every write: a write that read a row without a lock
            -- (from an instance's cache or one query) commits only if the row is still at that version.
            ALTER TABLE users ADD COLUMN version bigint NOT NULL DEFAULT 1;
            ALTER TABLE sessions ADD COLUMN version bigint NOT NULL DEFAULT 1;
            ALTER TABLE verification_codes ADD COLUMN version bigint NOT NULL DEFAULT 1;
            ALTER TABLE approvals ADD COLUMN version bigint NOT NULL DEFAULT 1;
            ALTER TABLE jobs ADD COLUMN version bigint NOT NULL DEFAULT 1;
            -- Rate-limit counters and the pace of device-code polls cost nothing to lose: a crash or a
            -- failover resets them.
            ALTER TABLE rate_limits SET UNLOGGED;
            CREATE UNLOGGED TABLE poll_pacing (
                key text PRIMARY KEY,
                last_poll double precision NOT NULL,                        -- seconds since 1970
                step double precision NOT NULL                              -- the interval the device must keep
            );
            CREATE INDEX poll_pacing_last_poll ON poll_pacing (last_poll);
            -- A write in one round trip: `checks` holds [kind, id, version] of every row the write read
            -- without a lock (a changed one aborts with 40001 and the caller runs the write again under
            -- row locks); `changes` the whole records to put or the ids to delete, with the columns
            -- derived from them; `notices` go to the other instances when the transaction commits.
            -- Returns the version of each change's row (null for a delete), in order.
            CREATE FUNCTION authd_apply(checks jsonb, changes jsonb, notices text[]) RETURNS jsonb
            LANGUAGE plpgsql AS $$
            DECLARE
                item jsonb;
                held bigint;
                written bigint;
                versions jsonb := '[]';
                notice text;
            BEGIN
                FOR item IN SELECT value FROM jsonb_array_elements(checks) ORDER BY value->>0, value->>1 LOOP
                    held := NULL;
                    CASE item->>0
                    WHEN 'u' THEN SELECT version INTO held FROM users WHERE id = (item->>1)::uuid FOR UPDATE;
                    WHEN 's' THEN SELECT version INTO held FROM sessions WHERE id = (item->>1)::uuid FOR UPDATE;
                    WHEN 'c' THEN SELECT version INTO held FROM verification_codes WHERE id = item->>1 FOR UPDATE;
                    WHEN 'a' THEN SELECT version INTO held FROM approvals WHERE id = item->>1 FOR UPDATE;
                    ELSE SELECT version INTO held FROM jobs WHERE id = (item->>1)::uuid FOR UPDATE;
                    END CASE;
                    IF held IS DISTINCT FROM (item->>2)::bigint THEN
                        RAISE EXCEPTION 'authd: the row % % changed since it was read', item->>0, item->>1 USING ERRCODE = '40001';
                    END IF;
                END LOOP;
                FOR item IN SELECT value FROM jsonb_array_elements(changes) LOOP
                    written := NULL;
                    CASE item->>0
                    WHEN 'u' THEN
                        INSERT INTO users AS t (id, email, username_key, created_at, record)
                        VALUES ((item->>1)::uuid, item->>3, item->>4, to_timestamp((item->>5)::float8), item->2)
                        ON CONFLICT (id) DO UPDATE SET email = excluded.email, username_key = excluded.username_key,
                            record = excluded.record, version = t.version + 1
                        RETURNING version INTO written;
                        -- Identities: drop the ones the user no longer has, add the new ones (another
                        -- user's is a unique violation, the contract's 409).
                        DELETE FROM user_auth_providers WHERE user_id = (item->>1)::uuid
                            AND (provider, provider_user_id) NOT IN (SELECT x->>0, x->>1 FROM jsonb_array_elements(item->6) x);
                        INSERT INTO user_auth_providers (provider, provider_user_id, user_id)
                            SELECT x->>0, x->>1, (item->>1)::uuid FROM jsonb_array_elements(item->6) x
                            WHERE NOT EXISTS (SELECT 1 FROM user_auth_providers p
                                WHERE p.provider = x->>0 AND p.provider_user_id = x->>1 AND p.user_id = (item->>1)::uuid);
                    WHEN 'U' THEN
                        -- The codes sent to its email go with it; sessions, tokens, identities and approvals cascade.
                        DELETE FROM verification_codes WHERE key = (SELECT email FROM users WHERE id = (item->>1)::uuid);
                        DELETE FROM users WHERE id = (item->>1)::uuid;
                    WHEN 's' THEN
                        INSERT INTO sessions AS t (id, user_id, created_at, expires_at, record)
                        VALUES ((item->>1)::uuid, (item->>3)::uuid, to_timestamp((item->>4)::float8), to_timestamp((item->>5)::float8), item->2)
                        ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record, version = t.version + 1
                        RETURNING version INTO written;
                        -- The token family: current hashes (rotated_at null) and recently rotated ones.
                        DELETE FROM user_tokens WHERE family = (item->>1)::uuid
                            AND token_hash NOT IN (SELECT x->>0 FROM jsonb_array_elements(item->6) x);
                        INSERT INTO user_tokens (token_hash, family, user_id, rotated_at)
                            SELECT x->>0, (item->>1)::uuid, (item->>3)::uuid, to_timestamp((x->>1)::float8) FROM jsonb_array_elements(item->6) x
                            ON CONFLICT (token_hash) DO UPDATE SET rotated_at = excluded.rotated_at;
                    WHEN 'S' THEN
                        DELETE FROM sessions WHERE id = (item->>1)::uuid;
                    WHEN 'c' THEN
                        INSERT INTO verification_codes AS t (id, purpose, key, expires_at, record)
                        VALUES (item->>1, item->>3, item->>4, to_timestamp((item->>5)::float8), item->2)
                        ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record, version = t.version + 1
                        RETURNING version INTO written;
                    WHEN 'C' THEN
                        DELETE FROM verification_codes WHERE id = item->>1;
                    WHEN 'a' THEN
                        INSERT INTO approvals AS t (id, user_id, expires_at, record)
                        VALUES (item->>1, (item->>3)::uuid, to_timestamp((item->>4)::float8), item->2)
                        ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record, version = t.version + 1
                        RETURNING version INTO written;
                    WHEN 'A' THEN
                        DELETE FROM approvals WHERE id = item->>1;
                    WHEN 'j' THEN
                        INSERT INTO jobs AS t (id, run_after, record)
                        VALUES ((item->>1)::uuid, to_timestamp((item->>3)::float8), item->2)
                        ON CONFLICT (id) DO UPDATE SET run_after = excluded.run_after, record = excluded.record, version = t.version + 1
                        RETURNING version INTO written;
                    ELSE
                        DELETE FROM jobs WHERE id = (item->>1)::uuid;
                    END CASE;
                    versions := versions || jsonb_build_array(written);
                END LOOP;
                FOREACH notice IN ARRAY notices LOOP
                    PERFORM pg_notify('authd_events', notice);
                END LOOP;
                RETURN versions;
            END
            $$;
            -- A rate-limit check in one round trip (GCRA): null when the event is allowed (its theoretical
            -- arrival time moved on), else the instant the next one fits. The row lock of the upsert
            -- serialises concurrent checks of one key across the instances.
            CREATE FUNCTION authd_take(k text, at float8, step float8, tolerance float8) RETURNS float8
            LANGUAGE plpgsql AS $$
            DECLARE
                held float8;
            BEGIN
                INSERT INTO rate_limits AS r (key, tat) VALUES (k, at + step)
                ON CONFLICT (key) DO UPDATE SET tat = greatest(r.tat, at) + step
                WHERE greatest(r.tat, at) - tolerance <= at
                RETURNING tat INTO held;
                IF FOUND THEN
                    RETURN NULL;
                END IF;
                SELECT tat INTO held FROM rate_limits WHERE key = k;
                RETURN greatest(held, at) - tolerance;
            END
            $$;
            -- Several rate-limit checks at once, all or nothing, in one round trip: null when every one
            -- is allowed (each key's TAT moved on; a key named twice counts twice), else the latest
            -- instant one of the refused fits. Rows are made, then locked in key order, so two
            -- calls sharing keys serialise instead of deadlocking.
            CREATE FUNCTION authd_take_all(ks text[], steps float8[], tolerances float8[], at float8) RETURNS float8
            LANGUAGE plpgsql AS $$
            DECLARE
                held jsonb := '{}';
                k text;
                t float8;
                i int;
                latest float8;
            BEGIN
                INSERT INTO rate_limits (key, tat) SELECT DISTINCT u, 0 FROM unnest(ks) u ON CONFLICT (key) DO NOTHING;
                FOR k, t IN SELECT r.key, r.tat FROM rate_limits r WHERE r.key = ANY(ks) ORDER BY r.key FOR UPDATE LOOP
                    held := held || jsonb_build_object(k, t);
                END LOOP;
                FOR i IN 1 .. cardinality(ks) LOOP
                    t := greatest((held->>ks[i])::float8, at);
                    IF t - tolerances[i] > at THEN
                        latest := greatest(coalesce(latest, t - tolerances[i]), t - tolerances[i]);
                    ELSE
                        held := held || jsonb_build_object(ks[i], t + steps[i]);
                    END IF;
                END LOOP;
                IF latest IS NOT NULL THEN
                    RETURN latest;
                END IF;
                UPDATE rate_limits r SET tat = (held->>r.key)::float8 WHERE r.key = ANY(ks);
                RETURN NULL;
            END
            $$;
            -- A device code's poll (RFC 8628) in one round trip: true when it came sooner than the
            -- interval, which then grows by 5 seconds; the poll is recorded either way.
            CREATE FUNCTION authd_pace(k text, at float8, initial float8) RETURNS boolean
            LANGUAGE plpgsql AS $$
            DECLARE
                held poll_pacing%ROWTYPE;
                early boolean;
            BEGIN
                INSERT INTO poll_pacing (key, last_poll, step) VALUES (k, at, initial) ON CONFLICT (key) DO NOTHING;
                IF FOUND THEN
                    RETURN false;
                END IF;
                SELECT * INTO held FROM poll_pacing WHERE key = k FOR UPDATE;
                early := at - held.last_poll < held.step;
                UPDATE poll_pacing SET last_poll = at, step = CASE WHEN early THEN held.step + 5 ELSE held.step END WHERE key = k;
                RETURN early;
            END
            $$;
            """),
    ]

    /// A script's statements, one by one (the extended query protocol takes one at a time): comments
    /// dropped, split at semicolons outside `$$` function bodies (the migrations have none inside strings).
    static func statements(_ sql: String) -> [String] {
        let code = sql.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }.joined(separator: "\n")
        var statements: [String] = [], current = "", inBody = false
        var rest = Substring(code)
        while let c = rest.first {
            if rest.hasPrefix("$$") {
                inBody.toggle()
                current += "$$"
                rest = rest.dropFirst(2)
                continue
            }
            rest = rest.dropFirst()
            if c == ";" && !inBody {
                statements.append(current)
                current = ""
            } else {
                current.append(c)
            }
        }
        statements.append(current)
        return statements.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
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
