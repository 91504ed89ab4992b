public import AuthKernel
import Foundation

/// The `passkeys` configuration section.
public struct PasskeySettings: Sendable {
    /// The relying party id (`rp_id`, required): the domain the passkeys belong to, e.g. `example.com`.
    public var rpID: String
    /// The name shown beside the passkey (`rp_name`, default the rp id).
    public var rpName: String
    /// The origins a ceremony may come from (`origins`, default `["https://RP_ID"]`): `https://`
    /// origins, and `android:apk-key-hash:` ones for Android apps. iOS apps use `https://RP_ID`.
    public var origins: [String]
    /// `TEAMID.bundle.id` of iOS apps allowed to use these passkeys (`apple_app_ids`): with any,
    /// `/.well-known/apple-app-site-association` is served with `webcredentials`.
    public var appleAppIDs: [String]
    /// Passkeys one user may have (`max_per_user`, default 20).
    public var maxPerUser: Int
    /// Passkey sign-ins (options and assertions) per client IP (`login_per_ip`, default 30 per minute).
    public var loginPerIP: RateLimitRule

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        rpID = try section.string("rp_id", default: "")
        guard !rpID.isEmpty else { throw ConfigError("passkeys.rp_id is required when providers lists passkey (the domain, e.g. example.com)") }
        guard rpID.count <= 253, rpID == rpID.lowercased(), rpID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }),
            !rpID.hasPrefix("."), !rpID.hasSuffix(".")
        else { throw ConfigError("passkeys.rp_id must be a lower-case domain name without scheme or port, e.g. example.com") }
        rpName = try section.string("rp_name", default: rpID)
        guard (1...64).contains(rpName.count) else { throw ConfigError("passkeys.rp_name must be 1 to 64 characters") }
        origins = try section.strings("origins", default: ["https://" + rpID])
        guard !origins.isEmpty else { throw ConfigError("passkeys.origins must list at least one origin") }
        for origin in origins {
            let https = origin.hasPrefix("https://") && origin.count > 8 && !origin.dropFirst(8).contains("/")
            guard https || origin.hasPrefix("android:apk-key-hash:") || (rpID == "localhost" && Self.isLocalhost(origin)) else {
                throw ConfigError("passkeys.origins: \(origin) is not an https:// origin (scheme and host, no path) or an android:apk-key-hash: origin")
            }
        }
        appleAppIDs = try section.strings("apple_app_ids", default: [])
        for id in appleAppIDs {
            let parts = id.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isUppercase || $0.isNumber }), !parts[1].isEmpty, id.count <= 255 else {
                throw ConfigError("passkeys.apple_app_ids: \(id) is not TEAMID.bundle.id (a ten-character team id)")
            }
        }
        maxPerUser = try section.int("max_per_user", default: 20, in: 1...100)
        loginPerIP = try section.rule("login_per_ip", default: RateLimitRule(limit: 30, window: 60))
    }

    /// Whether `origin` is `http://localhost` with or without a port: browsers treat it as secure,
    /// and with `rp_id` `localhost` it is how a passkey is tried on a laptop (contract §12).
    static func isLocalhost(_ origin: String) -> Bool {
        guard origin.hasPrefix("http://localhost") else { return false }
        let rest = origin.dropFirst("http://localhost".count)
        return rest.isEmpty || (rest.first == ":" && (2...6).contains(rest.count) && rest.dropFirst().allSatisfy(\.isASCII) && rest.dropFirst().allSatisfy(\.isNumber))
    }

    /// Whether a ceremony from `origin` is accepted: a listed origin, or any `http://localhost[:port]`
    /// when `rp_id` is `localhost`.
    func accepts(origin: String) -> Bool {
        origins.contains(origin) || (rpID == "localhost" && Self.isLocalhost(origin))
    }

    /// Whether `rp_id` is the issuer's host or a registrable suffix of it (a name with a dot, or
    /// `localhost`): passkeys made for another domain could never be used on authd's pages.
    func fits(issuer: String) -> Bool {
        guard let host = URLComponents(string: issuer)?.host?.lowercased() else { return false }
        return host == rpID || (host.hasSuffix("." + rpID) && (rpID.contains(".") || rpID == "localhost"))
    }
}

extension PasskeyProvider {
    /// The `passkeys` section's keys.
    public static let settings = [
        Setting("rp_id", .string, default: "none (required)", "The relying party id: the issuer's host or a domain it is under."),
        Setting("rp_name", .string, default: "rp_id", "The name an authenticator shows."),
        Setting("origins", .strings, default: "https://RP_ID", "The origins a ceremony may come from."),
        Setting("apple_app_ids", .strings, default: "none", "TEAM.bundle ids served in apple-app-site-association for webcredentials."),
        Setting("max_per_user", .integer, default: "20", "Passkeys one user may register."),
        Setting.rateLimit("login_per_ip", default: RateLimitRule(limit: 30, window: 60), "Passkey sign-in ceremonies per client network."),
    ]
}

extension PasskeyProvider {
    /// What the passkey provider records beyond the kernel's events.
    public static let auditEvents = [
        AuditEventDeclaration("passkey_added", "A passkey was registered."),
        AuditEventDeclaration("passkey_removed", "A passkey was removed."),
    ]
}
