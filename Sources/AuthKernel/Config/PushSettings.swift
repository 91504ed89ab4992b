import Foundation

/// Push notifications for approvals (contract §9): the `push.apns` section.
package struct PushSettings: Sendable {
    /// Token-based APNs authentication.
    package struct APNs: Sendable {
        /// The Apple Developer team id (`iss` of the provider token).
        package var teamID: String
        /// The id of the APNs key (`kid`).
        package var keyID: String
        /// The `.p8` key, PEM.
        package var privateKeyPEM: String
        /// The apps' bundle ids a session may register for; the first is the default.
        package var topics: [String]
        /// Where pushes go instead of Apple's servers (a test server); nil: by the token's environment.
        package var endpoint: String?
        /// Extra PEM certificates to trust (a test server's).
        package var caFile: String?
    }

    /// APNs, when configured.
    package var apns: APNs?

    /// Creates the defaults (no push).
    package init() {}

    /// Reads `push`.
    package init(_ top: inout ConfigSection) throws {
        var push = try top.section("push")
        var a = try push.section("apns")
        if !a.isEmpty {
            guard let team = try a.optionalString("team_id"), let key = try a.optionalString("key_id"),
                let path = try a.optionalString("private_key_path")
            else { throw ConfigError("push.apns needs team_id, key_id and private_key_path") }
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8), pem.contains("PRIVATE KEY") else {
                throw ConfigError("push.apns.private_key_path: cannot read a PEM private key (.p8) from \(path)")
            }
            let topics = try a.strings("topics", default: [])
            guard !topics.isEmpty, topics.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 200 }) else {
                throw ConfigError("push.apns.topics must list the apps' bundle ids, e.g. [\"com.example.app\"]")
            }
            let endpoint = try a.optionalString("endpoint")
            if let endpoint, !endpoint.hasPrefix("https://") { throw ConfigError("push.apns.endpoint must be an https:// URL") }
            let caFile = try a.optionalString("ca_file")
            try a.rejectUnknownKeys()
            apns = APNs(teamID: team, keyID: key, privateKeyPEM: pem, topics: topics, endpoint: endpoint, caFile: caFile)
        }
        try push.rejectUnknownKeys()
    }
}
