import Synchronization
public import Logging

/// The kernel services a provider may use: a small, stable, public set.
public struct Kernel: Sendable {
    /// Users and identities.
    public let users: UserService
    /// Sessions and tokens.
    public let sessions: SessionService
    /// One-time codes.
    public let codes: OneTimeCodeService
    /// Opaque single-use tokens for links and two-step flows (issue, peek, redeem once, revoke a subject's).
    public let tokens: SingleUseTokens
    /// Who may make an account (`signup`, contract §17): ask it before work a new account needs.
    public let signup: SignupPolicy
    /// Pending invitations and their links (contract §17).
    package let invitations: Invitations
    /// Requests another device of the same user must approve.
    public let approvals: ApprovalService
    /// Durable, retried background work.
    public let jobs: JobQueue
    /// What providers do before an account is deleted.
    public let accountDeletion: AccountDeletionHooks
    /// The ways an operator can mail an account's owner a reset (the console's "send a reset").
    public let resets = AccountResets()
    /// Accounts a sign-in from elsewhere never joins by email alone (the console's operators).
    public let protectedAccounts = ProtectedAccounts()
    /// The policies and second factors every sign-in passes through, whichever provider checked
    /// the first factor (see ``SignInPolicy``, ``SecondFactor``).
    public var signInHooks: SignInHooks { sessions.hooks }
    /// Credential changes and ended sessions, for those who follow them.
    public var events: AccountEvents { sessions.events }
    /// Keyed rate limits.
    public let rateLimiter: RateLimiter
    /// Outgoing mail.
    public let mailer: Mailer
    /// Every sentence of the pages and the mail, in each language there is a catalog for.
    public var messages: Messages { mailer.templates.messages }
    /// The time.
    public let clock: any AuthClock
    /// A logger for the provider (never log a token, code, PIN or password).
    public let logger: Logger
    /// `DATA/audit.jsonl`: record security events (sign-in failures, changes of credentials) with
    /// ``AuditLog/record(_:provider:user:account:device:reason:)``.
    public let audit: AuditLog

    /// Outbound HTTP (discovery documents, key sets, token endpoints): the server's client, which
    /// never follows a redirect. A provider's tests can hand the test kit their own.
    public let http: any OutboundHTTP

    /// The ids of the providers this server starts, as the configuration's `providers` lists them.
    public var providerIDs: [String] { config.providers }

    /// The whole configuration; a provider gets only its own section.
    package let config: AuthConfig
    /// Where decoy accounts live when several instances share the store; nil keeps them in memory.
    package let decoyRecords: (any DecoyRecordStore)?
    /// The server's keys and secrets.
    package let keys: any ServerKeys
    /// What a provider found doubtful in the settings without refusing to start: `authd check`
    /// lists each and fails.
    public let configurationProblems = ConfigurationProblems()

    /// The `issuer` (scheme, host and port; no trailing slash): the configured one, or the address
    /// bound when the default issuer's port was 0.
    public var issuer: String { sessions.verifier.issuer }

    /// Assembles the kernel (the server does).
    package init(
        config: AuthConfig, users: UserService, sessions: SessionService, codes: OneTimeCodeService, approvals: ApprovalService,
        jobs: JobQueue, accountDeletion: AccountDeletionHooks, rateLimiter: RateLimiter, mailer: Mailer, clock: any AuthClock,
        logger: Logger, audit: AuditLog, decoyRecords: (any DecoyRecordStore)?, keys: any ServerKeys, http: any OutboundHTTP = NoOutboundHTTP()
    ) {
        self.http = http
        self.config = config
        let tokens = SingleUseTokens(store: codes.store, secret: codes.secret, clock: codes.clock)
        let signup = SignupPolicy(
            mode: config.signup.mode, domains: config.signup.domains, allowsAnonymous: config.signup.anonymous, store: codes.store, clock: clock,
            mailer: mailer)
        var users = users
        users.signup = signup
        self.users = users
        self.signup = signup
        self.invitations = Invitations(store: codes.store, tokens: tokens, clock: clock)
        self.sessions = sessions
        self.codes = codes
        self.tokens = tokens
        self.approvals = approvals
        self.jobs = jobs
        self.accountDeletion = accountDeletion
        self.rateLimiter = rateLimiter
        self.mailer = mailer
        // Mail to an account is written in its person's language.
        mailer.recipientLanguage.withLock { $0 = { [users] address in try? await users.user(email: address)?.locale } }
        self.clock = clock
        self.logger = logger
        self.audit = audit
        self.decoyRecords = decoyRecords
        self.keys = keys
    }

    /// A secret of the server's (32 random bytes, e.g. a pepper), made on first use and the same
    /// on every later start and every instance: `DATA/keys/NAME.key` with the file store, sealed in
    /// the database with PostgreSQL.
    public func secret(named name: String) throws -> [UInt8] {
        try keys.loadOrCreateSecret(named: name, logger: logger)
    }

    /// Decoy accounts for a provider (see ``DecoyAccounts``): in memory, or shared by every instance.
    public func decoys<Record: Codable & Sendable>(_ namespace: String, as type: Record.Type = Record.self) -> DecoyAccounts<Record> {
        DecoyAccounts(shared: decoyRecords, namespace: namespace)
    }
}
