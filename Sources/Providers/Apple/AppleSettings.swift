public import AuthKernel

/// The `apple` configuration section.
public struct AppleSettings: Sendable {
    /// Accepted `aud` values: the app's bundle id and/or Services ID (`audiences`, required).
    public var audiences: [String]
    /// Accepted `iss` values (`issuers`, default Apple's two).
    public var issuers: [String]
    /// Apple's public keys (`jwks_url`).
    public var jwksURL: String
    /// Least time between two fetches of the JWKS for an unknown `kid`, seconds (`jwks_refetch_interval`, default 60).
    public var jwksRefetchInterval: Int
    /// Clock skew allowed on `exp` and `iat`, seconds.
    public var clockSkew: Int = 60
    /// Sign-in attempts per client IP (`attempts_per_ip`, default 60 per minute).
    public var attemptsPerIP: RateLimitRule
    /// Set when the app's Apple key is configured: exchange authorization codes and revoke on deletion.
    public var revocation: Revocation?

    /// What token exchange and revocation need.
    public struct Revocation: Sendable {
        /// Apple developer team id (`team_id`): the client secret's `iss`.
        public var teamID: String
        /// The key's id (`key_id`): the client secret's `kid`.
        public var keyID: String
        /// The .p8 ES256 private key, PEM (`private_key_path`).
        public var privateKeyPEM: String
        /// The client id (`client_id`): the bundle id or Services ID the codes are issued to.
        public var clientID: String
        /// Apple's token endpoint (`token_url`).
        public var tokenURL: String
        /// Apple's revocation endpoint (`revoke_url`).
        public var revokeURL: String
    }

    /// The issuers Apple has been seen to use.
    public static let defaultIssuers = ["https://appleid.apple.com", "https://account.apple.com"]

    /// Reads the section.
    public init(_ section: inout ConfigSection) throws {
        audiences = try section.strings("audiences", default: []).filter { !$0.isEmpty }
        guard !audiences.isEmpty else {
            throw ConfigError("apple.audiences must list the app's bundle id and/or Services ID when the apple provider is enabled")
        }
        issuers = try section.strings("issuers", default: Self.defaultIssuers)
        jwksURL = try section.string("jwks_url", default: "https://appleid.apple.com/auth/keys")
        jwksRefetchInterval = try section.int("jwks_refetch_interval", default: 60, in: 1...86_400)
        attemptsPerIP = try section.rule("attempts_per_ip", default: RateLimitRule(limit: 60, window: 60))
        let teamID = try section.optionalString("team_id")
        let keyID = try section.optionalString("key_id")
        let keyPath = try section.optionalString("private_key_path")
        let clientID = try section.optionalString("client_id")
        let tokenURL = try section.string("token_url", default: "https://appleid.apple.com/auth/token")
        let revokeURL = try section.string("revoke_url", default: "https://appleid.apple.com/auth/revoke")
        let given = [teamID, keyID, keyPath, clientID].compactMap { $0 }
        if given.isEmpty {
            revocation = nil
        } else {
            guard let teamID, let keyID, let keyPath, let clientID else {
                throw ConfigError("apple.team_id, apple.key_id, apple.private_key_path and apple.client_id go together: set all four or none")
            }
            guard let pem = try? String(contentsOfFile: keyPath, encoding: .utf8) else {
                throw ConfigError("apple.private_key_path: cannot read \(keyPath)")
            }
            revocation = Revocation(teamID: teamID, keyID: keyID, privateKeyPEM: pem, clientID: clientID, tokenURL: tokenURL, revokeURL: revokeURL)
        }
    }
}

import Foundation

extension AppleProvider {
    /// The `apple` section's keys.
    public static let settings = [
        Setting("audiences", .strings, default: "none (required)", "The app's bundle ids and Services IDs an identity token may be for."),
        Setting("issuers", .strings, default: "https://appleid.apple.com, https://account.apple.com", "The iss values accepted."),
        Setting("jwks_url", .string, default: "https://appleid.apple.com/auth/keys", "Where Apple's keys are fetched."),
        Setting("jwks_refetch_interval", .seconds, default: "60", "An unknown kid refetches the keys at most this often."),
        Setting.rateLimit("attempts_per_ip", default: RateLimitRule(limit: 60, window: 60), "Sign-ins per client network."),
        Setting("team_id", .string, default: "none", "For revocation: your team id."),
        Setting("key_id", .string, default: "none", "For revocation: the Sign in with Apple key's id."),
        Setting("private_key_path", .string, default: "none", secret: true, "For revocation: the key's .p8 file (mode 0600)."),
        Setting("client_id", .string, default: "none", "For revocation: the bundle id or Services ID the code was made for."),
        Setting("token_url", .string, default: "https://appleid.apple.com/auth/token", "Apple's token endpoint."),
        Setting("revoke_url", .string, default: "https://appleid.apple.com/auth/revoke", "Apple's revocation endpoint."),
    ]
}

// The key never reaches a log line or a `dump` (contract §17).
extension AppleSettings: RedactedDescription {}
extension AppleSettings.Revocation: RedactedDescription {}
