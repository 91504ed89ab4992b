public import Logging

/// The kernel services a provider may use: a small, stable, public set.
public struct Kernel: Sendable {
    /// The parsed configuration.
    public let config: AuthConfig
    /// Users and identities.
    public let users: UserService
    /// Sessions and tokens.
    public let sessions: SessionService
    /// One-time codes.
    public let codes: OneTimeCodeService
    /// Requests another device of the same user must approve.
    public let approvals: ApprovalService
    /// Durable, retried background work.
    public let jobs: JobQueue
    /// What providers do before an account is deleted.
    public let accountDeletion: AccountDeletionHooks
    /// Keyed rate limits.
    public let rateLimiter: RateLimiter
    /// Outgoing mail.
    public let mailer: Mailer
    /// The time.
    public let clock: any AuthClock
    /// A logger for the provider (never log a token, code, PIN or password).
    public let logger: Logger
    /// `DATA/audit.jsonl`: record security events (sign-in failures, changes of credentials) with
    /// ``AuditLog/record(_:provider:user:account:device:reason:)``.
    public let audit: AuditLog
    /// Where decoy accounts live when several instances share the store; nil keeps them in memory.
    /// Providers get theirs from ``decoys(_:)``.
    public let decoyRecords: (any DecoyRecordStore)?
    /// The server's keys, for secrets a provider needs (e.g. a pepper): ``ServerKeys/loadOrCreateSecret(named:logger:)``.
    /// `DATA/keys/` with the file backend; sealed in the database with PostgreSQL.
    public let keys: any ServerKeys

    /// Decoy accounts for a provider (see ``DecoyAccounts``): in memory, or shared by every instance.
    public func decoys<Record: Codable & Sendable>(_ namespace: String, as type: Record.Type = Record.self) -> DecoyAccounts<Record> {
        DecoyAccounts(shared: decoyRecords, namespace: namespace)
    }
}
