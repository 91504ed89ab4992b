import AuthKernel
import Foundation
import Testing

struct ConfigTests {
    func parse(_ json: String) throws -> AuthConfig {
        try AuthConfig.parse(Data(json.utf8), host: "127.0.0.1", port: 8080, availableProviders: ["email"])
    }

    func message(_ json: String) -> String? {
        do {
            _ = try parse(json)
            return nil
        } catch let error as ConfigError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func defaultsAreSafe() throws {
        let c = try parse("{}")
        #expect(c.issuer == "http://127.0.0.1:8080")
        #expect(c.audience == "authd")
        #expect(c.providers == ["email"])
        #expect(c.tokens.accessTTL == 3600 && c.tokens.refreshTTL == 2_592_000 && c.tokens.refreshReuseGrace == 10)
        #expect(c.mail.transport == "log")
    }

    @Test func readsTheContractKeys() throws {
        let c = try parse(#"{"issuer":"https://auth.example.com","audience":"app","tokens":{"access_ttl":600,"refresh_ttl":86400,"refresh_reuse_grace":5},"mail":{"transport":"outbox","from":"x <a@b.c>"},"email":{"code_ttl":120}}"#)
        #expect(c.issuer == "https://auth.example.com" && c.audience == "app")
        #expect(c.tokens.accessTTL == 600 && c.tokens.refreshTTL == 86400 && c.tokens.refreshReuseGrace == 5)
        #expect(c.mail.transport == "outbox")
        #expect(c.providerSections["email"]?.contains("code_ttl") == true)
    }

    @Test func namesTheBadKey() {
        #expect(message(#"{"isuer":"x"}"#) == "unknown configuration key isuer")
        #expect(message(#"{"tokens":{"access_tll":1}}"#) == "unknown configuration key tokens.access_tll")
        #expect(message(#"{"tokens":{"access_ttl":"1h"}}"#) == "tokens.access_ttl must be a whole number, not a string")
        #expect(message(#"{"tokens":{"access_ttl":0}}"#)?.hasPrefix("tokens.access_ttl must be between 1 and") == true)
        #expect(message(#"{"mail":{"transport":"pigeon"}}"#)?.hasPrefix("mail.transport must be one of") == true)
        #expect(message(#"{"providers":["email","apple"]}"#)?.contains("\"apple\"") == true)
        #expect(message(#"{"issuer":"ftp://x"}"#)?.hasPrefix("issuer must be an http or https URL") == true)
        #expect(message("[1]") == "the configuration file must hold a JSON object")
        #expect(message("{") != nil)
    }

    @Test func operatingKeysHaveDefaultsAndClearErrors() throws {
        let d = try parse("{}")
        #expect(d.metricsListen == nil && d.log.format == "text" && d.log.level == nil && d.shutdownTimeout == 10)
        #expect(d.audit == AuthConfig.AuditSettings() && d.trustedProxies == .none)
        let c = try parse(#"{"metrics":{"listen":"[::1]:9464"},"log":{"format":"json","level":"debug"},"http":{"trusted_proxies":["10.0.0.0/8"],"shutdown_timeout":3},"audit":{"max_bytes":4096,"keep":0}}"#)
        #expect(c.metricsListen?.host == "::1" && c.metricsListen?.port == 9464)
        #expect(c.log.format == "json" && c.log.level == "debug" && c.shutdownTimeout == 3)
        #expect(c.trustedProxies.contains("10.9.8.7") && c.audit.keep == 0)
        #expect(message(#"{"metrics":{"listen":"9464"}}"#)?.contains("metrics.listen must be HOST:PORT") == true)
        #expect(message(#"{"log":{"format":"xml"}}"#) == #"log.format must be text or json, not "xml""#)
        #expect(message(#"{"log":{"level":"loud"}}"#)?.hasPrefix("log.level must be one of") == true)
        #expect(message(#"{"http":{"trusted_proxies":["example.com"]}}"#)?.contains("http.trusted_proxies") == true)
        #expect(message(#"{"audit":{"max_bytes":10}}"#)?.contains("audit.max_bytes") == true)
        #expect(message(#"{"audit":{"rotate":true}}"#) == "unknown configuration key audit.rotate")
    }

    @Test func storageBackendsAndTheirErrors() throws {
        let d = try parse("{}")
        #expect(d.storage.backend == "file" && d.storage.postgres == nil)
        let url = "postgres://authd:secret@db.internal:5433/auth"
        let c = try parse(#"{"issuer":"https://a.example.com","storage":{"backend":"postgres","postgres":{"url":"\#(url)","pool_size":4,"tls":"verify-full","key_encryption_key_file":"/etc/authd/kek"}}}"#)
        #expect(c.storage.backend == "postgres" && c.storage.postgres?.url == url && c.storage.postgres?.poolSize == 4)
        #expect(c.storage.postgres?.tls == "verify-full" && c.storage.postgres?.keyEncryptionKeyFile == "/etc/authd/kek")
        // The URL (with its password) can live in its own file.
        let file = temporaryFile(contents: url + "\n")
        #expect(try parse(#"{"issuer":"https://a.example.com","storage":{"backend":"postgres","postgres":{"url_file":"\#(file)"}}}"#).storage.postgres?.url == url)
        #expect(message(#"{"storage":{"backend":"mysql"}}"#) == #"storage.backend must be one of file, postgres, not "mysql""#)
        #expect(message(#"{"issuer":"https://a.example.com","storage":{"backend":"postgres"}}"#) == "storage.postgres needs url or url_file")
        #expect(message(#"{"storage":{"backend":"postgres","postgres":{"url":"\#(url)"}}}"#)?.contains("needs issuer set explicitly") == true)
        #expect(message(#"{"storage":{"postgres":{"url":"\#(url)","url_file":"/x"}}}"#) == "storage.postgres: give url or url_file, not both")
        #expect(message(#"{"storage":{"postgres":{"url":"mysql://x"}}}"#) == "storage.postgres.url must start with postgres://")
        #expect(message(#"{"storage":{"postgres":{"url_file":"/nonexistent/url"}}}"#) == "storage.postgres.url_file: cannot read /nonexistent/url")
        #expect(message(#"{"storage":{"postgres":{"url":"\#(url)","tls":"maybe"}}}"#)?.contains("storage.postgres.tls") == true)
        #expect(message(#"{"storage":{"postgres":{"url":"\#(url)","pool":1}}}"#) == "unknown configuration key storage.postgres.pool")
        #expect(message(#"{"storage":{"postgres":{"url":"\#(url)","ca_file":"/nonexistent/ca.pem"}}}"#) == "storage.postgres.ca_file: cannot read /nonexistent/ca.pem")
    }

    func temporaryFile(contents: String) -> String {
        let path = NSTemporaryDirectory() + "authd-config-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        return path
    }

    @Test func rateLimitRulesKnowWhereTheyLive() throws {
        var section = ConfigSection(path: "email", values: ["sends_per_ip": .object(["limit": .number(5), "window": .number(60)])])
        let set = try section.rule("sends_per_ip", default: RateLimitRule(limit: 20, window: 3600))
        let unset = try section.rule("verifies_per_ip", default: RateLimitRule(limit: 60, window: 600))
        #expect(set.name == "email.sends_per_ip" && set == RateLimitRule(limit: 5, window: 60))
        #expect(set.builtIn == RateLimitRule.Limits(limit: 20, window: 3600))
        #expect(unset.name == "email.verifies_per_ip" && unset == RateLimitRule(limit: 60, window: 600))
    }

    @Test func pushAndWebhookKeysAndTheirErrors() throws {
        let folder = NSTemporaryDirectory() + "authd-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let p8 = folder + "/AuthKey.p8", notKey = folder + "/empty", secret = folder + "/secret"
        try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8).write(to: URL(fileURLWithPath: p8))
        try Data("nothing".utf8).write(to: URL(fileURLWithPath: notKey))
        try Data(("whsec_" + Data(repeating: 7, count: 32).base64EncodedString()).utf8).write(to: URL(fileURLWithPath: secret))

        let push = try parse(#"{"push":{"apns":{"team_id":"T","key_id":"K","private_key_path":"\#(p8)","topics":["com.example.a","com.example.b"]}}}"#)
        #expect(push.push.apns?.topics == ["com.example.a", "com.example.b"] && push.push.apns?.endpoint == nil)
        #expect(try parse("{}").push.apns == nil && (try parse("{}").webhooks.endpoints.isEmpty))
        let hooks = try parse(#"{"webhooks":[{"url":"http://127.0.0.1:9/h","secret_file":"\#(secret)","events":["user.created"]}],"webhook_delivery":{"retry_delay":5}}"#)
        #expect(hooks.webhooks.endpoints.map(\.events) == [["user.created"]] && hooks.webhooks.endpoints[0].secret.count == 32)
        #expect(hooks.webhooks.retryDelay == 5 && hooks.webhooks.maxAttempts == 15)

        let refused: [(String, String)] = [
            (#"{"push":{"apns":{"team_id":"T","key_id":"K"}}}"#, "push.apns needs team_id, key_id and private_key_path"),
            (#"{"push":{"apns":{"team_id":"T","key_id":"K","private_key_path":"\#(notKey)","topics":["a"]}}}"#, "cannot read a PEM private key"),
            (#"{"push":{"apns":{"team_id":"T","key_id":"K","private_key_path":"\#(p8)","topics":[]}}}"#, "push.apns.topics must list"),
            (#"{"push":{"apns":{"team_id":"T","key_id":"K","private_key_path":"\#(p8)","topics":["a"],"endpoint":"http://x"}}}"#, "must be an https:// URL"),
            (#"{"push":{"apns":{"team_id":"T","key_id":"K","private_key_path":"\#(p8)","topics":["a"],"tpoics":1}}}"#, "unknown configuration key push.apns.tpoics"),
            (#"{"webhooks":[{"url":"http://example.com/h","secret_file":"\#(secret)"}]}"#, "must be an https:// URL"),
            (#"{"webhooks":[{"url":"https://example.com/h","secret_file":"\#(notKey)"}]}"#, "must hold a secret whsec_"),
            (#"{"webhooks":[{"url":"https://example.com/h","secret_file":"\#(secret)","events":["user.exploded"]}]}"#, "unknown event type user.exploded"),
            (#"{"webhooks":{"url":"https://example.com/h"}}"#, "webhooks must be an array of objects"),
            (#"{"webhook_delivery":{"retry_delay":0}}"#, "webhook_delivery.retry_delay"),
        ]
        for (json, message) in refused {
            #expect(throws: ConfigError.self, "\(message)") { _ = try parse(json) }
            do { _ = try parse(json) } catch let error as ConfigError { #expect(error.message.contains(message), "\(error.message)") }
        }
    }

    @Test func transportAPIKeyAndDeviceKeys() throws {
        let pem = NSTemporaryDirectory() + "authd-config-\(UUID().uuidString).pem"
        try Data("x".utf8).write(to: URL(fileURLWithPath: pem))
        defer { try? FileManager.default.removeItem(atPath: pem) }
        let tls = try parse(#"{"http":{"tls":{"cert_file":"\#(pem)","key_file":"\#(pem)"},"unix_socket":"/run/authd.sock"}}"#)
        #expect(tls.tls == AuthConfig.TLSFiles(certificateFile: pem, keyFile: pem) && tls.issuer == "https://127.0.0.1:8080")
        #expect(tls.unixSocket == "/run/authd.sock" && tls.tcp)
        #expect(message(#"{"http":{"tls":{"cert_file":"\#(pem)"}}}"#) == "http.tls needs cert_file and key_file (PEM)")
        #expect(message(#"{"http":{"tls":{"cert_file":"/nonexistent","key_file":"\#(pem)"}}}"#) == "http.tls.cert_file: cannot read /nonexistent")
        #expect(message(#"{"http":{"tcp":false}}"#) == "http.tcp false needs http.unix_socket: authd would listen nowhere")
        #expect(message(#"{"http":{"unix_socket":""}}"#) == "http.unix_socket must be a path of at most 100 bytes")
        #expect(message(#"{"api_keys":{"access_ttl":0}}"#) == "api_keys.access_ttl must be between 1 and 86400, not 0")
        #expect(message(#"{"api_keys":{"max_per_user":0}}"#) != nil)
        #expect(message(#"{"device":{"code_ttl":2}}"#) == "device.code_ttl must be at least 5 seconds")
        #expect(message(#"{"device":{"verification_uri":"ftp://x/device"}}"#)?.hasPrefix("device.verification_uri must be") == true)
        #expect(message(#"{"device":{"verification_uri":"https://x/device?a=b"}}"#)?.hasPrefix("device.verification_uri must be") == true)
        let d = try parse(#"{"device":{"interval":3,"verification_uri":"https://auth.example.com/device"},"api_keys":{"access_ttl":60}}"#)
        #expect(d.device.interval == 3 && d.device.verificationURI == "https://auth.example.com/device" && d.tokens.apiKeys.accessTTL == 60)
    }
}
