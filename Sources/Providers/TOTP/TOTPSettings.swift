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
