import Foundation
import ServerProcessSupport
import Testing

/// Contract §17, "Secrets stay out of logs and `check`" (issue #46): at `AUTHD_LOG_LEVEL=debug` the
/// real binary logged the service holding the parsed configuration file whole, the SMTP password
/// with it. Every log line, at every level, from start to a reload, a `check` and the stop.
struct SecretsInLogsTests {
    static let smtpPassword = "SMTP-PASSWORD-e2e-41c7"
    static let upstreamSecret = "UPSTREAM-CLIENT-SECRET-e2e-8d03"
    static let webhookKey = (201...232).map { UInt8($0) }
    /// A throwaway P-256 key: Apple's `private_key_path`, a built-in provider's declared secret.
    static let appleKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqlmuxj4623NsG/Js
        p/HC/6Ndk6N0+E9lccx11n7UYaehRANCAASkYnHgwebxqlwsUH30cDaej4bNpcBN
        icI/pN2eSbJq21Vwa5rnmWM/1L6i8cl1dpyLOVbuNQoxK0wZEFZxMX7R
        -----END PRIVATE KEY-----

        """

    /// Whether `text` holds any secret of the configuration, or a run of four of the webhook key's
    /// bytes as Swift writes an array of them.
    static func leaks(_ text: String) -> [String] {
        let bytes = webhookKey.map(String.init)
        let runs = (0...(bytes.count - 4)).map { bytes[$0..<$0 + 4].joined(separator: ", ") }
        let pem = appleKey.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
        let whsec = "whsec_" + Data(webhookKey).base64EncodedString()
        return ([smtpPassword, upstreamSecret, whsec, String(whsec.dropFirst(6).prefix(16))] + pem + runs).filter { text.contains($0) }
    }

    @Test func noSecretReachesAnyLogLineAtDebugLevelNorCheck() async throws {
        let folder = try ServerProcess.makeFolder()
        let write = { (name: String, text: String) throws -> String in
            let path = folder + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let upstream = try write("upstream-secret", Self.upstreamSecret + "\n")
        let webhook = try write("webhook-secret", "whsec_" + Data(Self.webhookKey).base64EncodedString() + "\n")
        let key = try write("AuthKey.p8", Self.appleKey)
        _ = try write("authd.json", #"""
            {"mail": {"transport": "outbox", "smtp": {"host": "smtp.example.test", "username": "authd", "password": "\#(Self.smtpPassword)"}},
             "providers": ["email", "password", "oidc", "apple"],
             "oidc": {"providers": {"corp": {"issuer": "http://127.0.0.1:9", "client_id": "authd", "client_secret_file": "\#(upstream)"}}},
             "apple": {"audiences": ["com.example.app"], "jwks_url": "http://127.0.0.1:9/keys", "team_id": "TEAM1", "key_id": "KEY1",
                       "private_key_path": "\#(key)", "client_id": "com.example.app"},
             "webhooks": [{"url": "http://127.0.0.1:9/hook", "secret_file": "\#(webhook)"}]}
            """#)
        let log = folder + "/server.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let server = ServerProcess(folder: folder)
        server.process.environment?["AUTHD_LOG_LEVEL"] = "debug"
        // A file, not the pipe: debug lines must never fill a pipe nobody reads while the server runs.
        server.process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try server.start()
        #expect(try await server.request("POST", "/api/v1/auth/email/send-code", json: ["email": "someone@example.com"]).0 == 200)

        // A reload reads the file again.
        kill(server.process.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(60)
        while !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("configuration reloaded"), Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }

        // `authd check`, answered by the running server: secrets redacted, paths and policy shown.
        let check = ServerProcess(folder: folder, arguments: ["check", "--data", folder])
        #expect(try check.runToExit() == 0)
        let checked = check.standardOutput()
        #expect(Self.leaks(checked) == [])
        let lines = checked.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"  mail.smtp.password = "[redacted]"  (file)"#), "\(checked)")
        #expect(lines.contains(#"  apple.private_key_path = "[redacted]"  (file)"#), "\(checked)")
        #expect(lines.contains(#"  oidc.providers.corp.client_secret_file = "\#(upstream)"  (file)"#), "\(checked)")
        #expect(lines.contains(#"  webhooks[0].secret_file = "\#(webhook)"  (file)"#), "\(checked)")
        #expect(lines.contains("  password.min_length = 8  (default)"), "\(checked)")

        #expect(server.stop() == 0)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("Starting service") && text.contains("ConfigReloader"), "the debug lines naming each service were written")
        #expect(text.contains("configuration reloaded"))
        #expect(Self.leaks(text) == [], "\(text.split(separator: "\n").filter { !Self.leaks(String($0)).isEmpty }.joined(separator: "\n"))")
    }
}
