public import AuthKernel

/// The `totp` configuration section.
public struct TOTPSettings: Sendable {
    /// The name authenticator apps show above the code (`issuer`, default "authd"); the account
    /// name beside it is the user's email, user name or id.
    public var issuer: String
    /// Consecutive wrong TOTP or recovery codes that lock the user's second factor (`max_attempts`, default 5).
    public var maxAttempts: Int
    /// Seconds the lock lasts (`lockout`, default 900).
    public var lockout: Int

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        issuer = try section.string("issuer", default: "authd")
        guard (1...64).contains(issuer.count), !issuer.contains(":") else {
            throw ConfigError("totp.issuer must be 1 to 64 characters without a colon")
        }
        maxAttempts = try section.int("max_attempts", default: 5, in: 1...100)
        lockout = try section.seconds("lockout", default: 900, max: 86_400)
    }
}

extension TOTPProvider {
    /// The `totp` section's keys.
    public static let settings = [
        Setting("issuer", .string, default: "authd", "The name an authenticator app shows beside the account."),
        Setting("max_attempts", .integer, default: "5", "Consecutive wrong codes that lock the second factor."),
        Setting("lockout", .seconds, default: "900", "How long that lock lasts."),
    ]
}

extension TOTPProvider {
    /// What the TOTP provider records beyond the kernel's events.
    public static let auditEvents = [
        AuditEventDeclaration("totp_enabled", "An authenticator app was confirmed as a second factor."),
        AuditEventDeclaration("totp_disabled", "The authenticator app was removed."),
        AuditEventDeclaration("recovery_code_used", "A recovery code answered a second-factor challenge."),
        AuditEventDeclaration("recovery_codes_replaced", "New recovery codes were made; the old ones no longer work."),
    ]
}
