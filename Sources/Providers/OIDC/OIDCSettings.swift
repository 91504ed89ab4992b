public import AuthKernel

/// The `oidc` configuration section (contract §16).
public struct OIDCSettings: Sendable {
    /// The identity providers, by name (`providers`).
    public var upstreams: [String: OIDCUpstream]
    /// Token exchanges per client network (`attempts_per_ip`, default 30 per minute).
    public var attemptsPerIP: RateLimitRule
    /// Seconds of clock difference allowed on `exp` and `iat` (`clock_skew`, default 60).
    public var clockSkew: Int

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        var upstreams: [String: OIDCUpstream] = [:]
        for (name, section) in try section.entries("providers") {
            var entry = section
            upstreams[name] = try OIDCUpstream(name: name, &entry)
        }
        self.upstreams = upstreams
        attemptsPerIP = try section.rule("attempts_per_ip", default: RateLimitRule(limit: 30, window: 60))
        clockSkew = try section.int("clock_skew", default: 60, in: 0...600)
    }
}

extension OIDCProvider {
    /// The `oidc` section's keys.
    public static let settings = [
        Setting(
            "providers", .object, default: "none",
            "The identity providers by name: issuer, client_id, client_secret_file, audiences, scopes, kind (oidc, google, microsoft, github), subject, trust_email, nonce_hash (none, sha256), require_nonce, label, web (offered on /login, default true), authorize_url, token_url, api_url (GitHub's)."),
        Setting.rateLimit("attempts_per_ip", default: RateLimitRule(limit: 30, window: 60), "ID-token exchanges per client network."),
        Setting("clock_skew", .seconds, default: "60", "Clock difference allowed on an ID token's exp and iat (0 to 600)."),
    ]
}

// The upstreams' client secrets never reach a log line or a `dump` (contract §17).
extension OIDCSettings: RedactedDescription {}
extension OIDCUpstream: RedactedDescription {}
