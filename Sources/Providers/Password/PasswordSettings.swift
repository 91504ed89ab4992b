public import AuthKernel

/// The `password` configuration section.
public struct PasswordSettings: Sendable {
    /// Shortest password in Unicode code points after NFKC normalisation (`min_length`, default 8).
    public var minLength: Int
    /// Whether registration needs the mailed code before the first session (`require_email_verification`, default true).
    public var requireEmailVerification: Bool
    /// Seconds a device-reset request waits for approval (`approval_ttl`, default 60); an approved one then has as long again to complete.
    public var approvalTTL: Int
    /// Argon2id parameters (`argon2.ops_limit` ≥ 2, `argon2.memory_kib` ≥ 19456: OWASP's minimum).
    public var argon2: Argon2id
    /// Hashes computed at once (`max_concurrent_hashes`, default one per core but one, at least one);
    /// the rest queue. More threads than cores add no hashes per second, only cache pressure, and a
    /// hash on every core (even in the idle scheduling class) slows every other request during a
    /// login storm: leaving one core to the event loops keeps their latency (docs/benchmarks.md).
    public var maxConcurrentHashes: Int
    /// Verification and reset codes (`code_ttl` 900, `resend_interval` 60, `max_attempts` 5, `max_failures` 30, `failure_window` 3600).
    public var codes: CodePolicy
    /// Login attempts per client IP (`login_per_ip`, default 30 per minute).
    public var loginPerIP: RateLimitRule
    /// Login attempts per email, known or not (`login_per_email`, default 10 per 5 minutes).
    public var loginPerEmail: RateLimitRule
    /// Consecutive wrong passwords that lock an account's password sign-in (`lockout_after`, default 10).
    public var lockoutAfter: Int
    /// Length of that lock in seconds (`lockout`, default 900).
    public var lockout: Int
    /// Registrations per client IP (`register_per_ip`, default 10 per hour).
    public var registerPerIP: RateLimitRule
    /// Codes checked at `verify-email` and `reset/email/verify` per client IP (`verifies_per_ip`, default 60 per 10 minutes).
    public var verifiesPerIP: RateLimitRule
    /// Codes one client may check for one email (`attempts_per_client`, default 10 per hour): a
    /// stranger spends this before the email's own `max_failures`, which would lock its owner out.
    public var attemptsPerClient: RateLimitRule
    /// `resend-verification` requests per client IP (`resends_per_ip`, default 20 per hour).
    public var resendsPerIP: RateLimitRule
    /// Resets of one kind (email or device) started per email and client IP (`resets_per_email_ip`,
    /// default 3 per hour): what one client may ask for one account.
    public var resetsPerEmailAndIP: RateLimitRule
    /// Resets of one kind started per email from all clients together, known account or not
    /// (`resets_per_email`, default 10 per hour): the ceiling that bounds the mail one address gets.
    /// Strangers exhausting their own budget (above) leave the owner's, and device resets (which mail
    /// nothing) never use up the budget of email resets.
    public var resetsPerEmail: RateLimitRule
    /// Resets started per client IP (`resets_per_ip`, default 10 per hour).
    public var resetsPerIP: RateLimitRule
    /// Device resets one account may have pending (`max_pending_resets`, default 2); more become decoys that no device sees.
    public var maxPendingResets: Int
    /// Whether a right password also needs a code mailed to the account's verified address
    /// (`login_requires_email_code`, default false; contract §10): the 202 challenge offers
    /// `email_code` to users with neither TOTP nor a passkey.
    public var loginRequiresEmailCode: Bool
    /// Milliseconds a refused password sign-in is held after it arrived, at least (`refusal_floor_ms`,
    /// default 250, 0…10000; contract §12): an unknown email, a wrong native password and a wrong
    /// imported one are answered at the same time unless the imported hash alone takes longer.
    public var refusalFloorMilliseconds: Int

    /// Longest password, in code points.
    public static let maxLength = 128
    /// Registrations of one email kept waiting for its code at once (each with the password its
    /// client chose); a further one replaces the oldest.
    public static let maxPendingRegistrations = 5

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        minLength = try section.int("min_length", default: 8, in: 1...Self.maxLength)
        requireEmailVerification = try section.bool("require_email_verification", default: true)
        approvalTTL = try section.seconds("approval_ttl", default: 60, max: 3600)
        var a = try section.section("argon2")
        argon2 = Argon2id(
            opsLimit: try a.int("ops_limit", default: 2, in: 2...20),
            memLimit: try a.int("memory_kib", default: 19_456, in: 19_456...4_194_304) * 1024
        )
        try a.rejectUnknownKeys()
        maxConcurrentHashes = try section.int("max_concurrent_hashes", default: max(1, System.coreCount - 1), in: 1...256)
        codes = CodePolicy(
            ttl: try section.seconds("code_ttl", default: 900, max: 86_400),
            resendInterval: try section.int("resend_interval", default: 60, in: 0...86_400),
            maxAttempts: try section.int("max_attempts", default: 5, in: 1...100),
            maxFailures: try section.int("max_failures", default: 30, in: 1...10_000),
            failureWindow: try section.seconds("failure_window", default: 3600, max: 86_400)
        )
        loginPerIP = try section.rule("login_per_ip", default: RateLimitRule(limit: 30, window: 60))
        loginPerEmail = try section.rule("login_per_email", default: RateLimitRule(limit: 10, window: 300))
        lockoutAfter = try section.int("lockout_after", default: 10, in: 1...1000)
        lockout = try section.seconds("lockout", default: 900, max: 86_400)
        registerPerIP = try section.rule("register_per_ip", default: RateLimitRule(limit: 10, window: 3600))
        verifiesPerIP = try section.rule("verifies_per_ip", default: RateLimitRule(limit: 60, window: 600))
        attemptsPerClient = try section.rule("attempts_per_client", default: RateLimitRule(limit: 10, window: 3600))
        resendsPerIP = try section.rule("resends_per_ip", default: RateLimitRule(limit: 20, window: 3600))
        resetsPerEmailAndIP = try section.rule("resets_per_email_ip", default: RateLimitRule(limit: 3, window: 3600))
        resetsPerEmail = try section.rule("resets_per_email", default: RateLimitRule(limit: 10, window: 3600))
        resetsPerIP = try section.rule("resets_per_ip", default: RateLimitRule(limit: 10, window: 3600))
        maxPendingResets = try section.int("max_pending_resets", default: 2, in: 1...20)
        loginRequiresEmailCode = try section.bool("login_requires_email_code", default: false)
        refusalFloorMilliseconds = try section.int("refusal_floor_ms", default: 250, in: 0...10_000)
    }
}

import NIOCore

extension PasswordProvider {
    /// The `password` section's keys.
    public static let settings = [
        Setting("min_length", .integer, default: "8", "Shortest password, in Unicode code points after NFKC normalisation (the longest is 128)."),
        Setting("require_email_verification", .boolean, default: "true", "Registration creates nothing until the mailed code is verified; false makes the account at once."),
        Setting("approval_ttl", .seconds, default: "60", "How long a device reset waits for approval; once approved, the requester has as long again."),
        Setting("argon2.ops_limit", .integer, default: "2", "Argon2id passes (2–20); raising it re-hashes each password at its next login."),
        Setting("argon2.memory_kib", .integer, default: "19456", "Argon2id memory in KiB (at least OWASP's 19456)."),
        Setting("max_concurrent_hashes", .integer, default: "cores − 1, at least 1", "Hashes computed at once, on idle-priority threads; more queue."),
        Setting("code_ttl", .seconds, default: "900", "How long a verification or reset code works."),
        Setting("resend_interval", .seconds, default: "60", "One code per address per this many seconds; 0 turns it off."),
        Setting("max_attempts", .integer, default: "5", "Wrong tries that end a code."),
        Setting("max_failures", .integer, default: "30", "Wrong codes allowed per address within failure_window, across resends."),
        Setting("failure_window", .seconds, default: "3600", "The window of max_failures."),
        Setting.rateLimit("login_per_ip", default: RateLimitRule(limit: 30, window: 60), "Logins per client network, known and unknown addresses alike."),
        Setting.rateLimit("login_per_email", default: RateLimitRule(limit: 10, window: 300), "Logins per address, known or not."),
        Setting("lockout_after", .integer, default: "10", "Consecutive wrong passwords that lock the account's password sign-in."),
        Setting("lockout", .seconds, default: "900", "How long that lock lasts."),
        Setting.rateLimit("register_per_ip", default: RateLimitRule(limit: 10, window: 3600), "Registrations per client network."),
        Setting.rateLimit("verifies_per_ip", default: RateLimitRule(limit: 60, window: 600), "Code checks per client network."),
        Setting.rateLimit("attempts_per_client", default: RateLimitRule(limit: 10, window: 3600), "Code checks one client network may make for one address."),
        Setting.rateLimit("resends_per_ip", default: RateLimitRule(limit: 20, window: 3600), "Verification codes resent per client network."),
        Setting.rateLimit("resets_per_email_ip", default: RateLimitRule(limit: 3, window: 3600), "Resets one client network may ask for one address."),
        Setting.rateLimit("resets_per_email", default: RateLimitRule(limit: 10, window: 3600), "Resets asked for one address from anywhere (a client's first ask always counts as its own)."),
        Setting.rateLimit("resets_per_ip", default: RateLimitRule(limit: 10, window: 3600), "Resets asked per client network."),
        Setting("max_pending_resets", .integer, default: "2", "Device resets one address may have waiting at once."),
        Setting("login_requires_email_code", .boolean, default: "false", "Every login also needs a code mailed to the verified address."),
        Setting("refusal_floor_ms", .integer, default: "250", "A refused login is answered no sooner than this after it arrived, whatever the reason."),
    ]
}

extension PasswordProvider {
    /// What the password provider records beyond the kernel's events.
    public static let auditEvents = [
        AuditEventDeclaration("password_changed", "A password was set, changed or reset."),
        AuditEventDeclaration("reset_requested", "A password reset was asked for (by mail or by another device)."),
        AuditEventDeclaration("reset_completed", "A password reset set a new password."),
    ]
}
