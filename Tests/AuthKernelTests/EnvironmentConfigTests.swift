import AuthKernel
import AuthStorage
import Foundation
import Testing

/// Contract §14: every key as `AUTHD_<SECTION>__<KEY>`, typed as the key is read, `_FILE` for
/// secrets, the environment over the file, errors that name the variable.
struct EnvironmentConfigTests {
    static let fileKeys: Set<String> = ["storage.postgres.url_file", "mail.smtp.password_file"]

    func parse(_ variables: [String: String]) throws -> AuthConfig { try parse("{}", variables) }

    func message(_ variables: [String: String]) -> String? { message("{}", variables) }

    func parse(_ file: String, _ variables: [String: String]) throws -> AuthConfig {
        let environment = try ConfigEnvironment(variables, fileKeys: Self.fileKeys)
        return try AuthConfig.parse(Data(file.utf8), host: "127.0.0.1", port: 8080, availableProviders: ["email"], environment: environment)
    }

    func message(_ file: String, _ variables: [String: String]) -> String? {
        do {
            _ = try parse(file, variables)
            return nil
        } catch {
            return (error as? ConfigError)?.message ?? "\(error)"
        }
    }

    func temporaryFile(_ contents: String) throws -> String {
        let path = NSTemporaryDirectory() + "authd-env-\(UUID().uuidString)"
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func eachValueTakesTheTypeItsKeyIsReadAs() throws {
        let c = try parse([
            "AUTHD_ISSUER": "https://auth.example.com",
            "AUTHD_AUDIENCE": "123",  // a string key: verbatim, never a number
            "AUTHD_TOKENS__ACCESS_TTL": "120",
            "AUTHD_HTTP__TCP": "false",
            "AUTHD_HTTP__UNIX_SOCKET": "/run/authd.sock",
            "AUTHD_HTTP__TRUSTED_PROXIES": #"["10.0.0.0/8"]"#,
            "AUTHD_PROVIDERS": #"["email"]"#,
            "AUTHD_DEVICE__STARTS_PER_IP": #"{"limit": 7, "window": 60}"#,
            "AUTHD_OPENID__TOKEN_PER_CLIENT__LIMIT": "9",
        ])
        #expect(c.issuer == "https://auth.example.com" && !c.issuerIsDefault)
        #expect(c.audience == "123")
        #expect(c.tokens.accessTTL == 120)
        #expect(c.tcp == false && c.unixSocket == "/run/authd.sock")
        #expect(c.trustedProxies != .none)
        #expect(c.providers == ["email"])
        #expect(c.device.startsPerIP == RateLimitRule(limit: 7, window: 60))
        #expect(c.openID.tokenPerClient.limit == 9)
        #expect(c.environment?.unused() == [])
    }

    @Test func aWholeSectionAsJSONAndItsKeysOneByOneInAProvidersSection() throws {
        let c = try parse(["AUTHD_TOKENS": #"{"access_ttl": 300, "refresh_reuse_grace": 0}"#, "AUTHD_EMAIL__ARGON2__OPS_LIMIT": "3"])
        #expect(c.tokens.accessTTL == 300 && c.tokens.refreshReuseGrace == 0)
        // A provider reads its section later, nested levels included.
        var email = try #require(c.providerSections["email"])
        #expect(email.isEmpty == false && email.contains("argon2"))
        var argon2 = try email.section("argon2")
        #expect(try argon2.int("ops_limit", default: 2, in: 1...10) == 3)
        #expect(c.environment?.unused() == [])
    }

    @Test func aMapsEntriesComeFromTheFileAndFromVariablesAlone() throws {
        let environment = try ConfigEnvironment(
            [
                "AUTHD_OIDC__PROVIDERS__GOOGLE__CLIENT_ID": "web-client", "AUTHD_OIDC__PROVIDERS__GITLAB__CLIENT_ID": "from-env",
                "AUTHD_OIDC__PROVIDERS__GITLAB__TRUST_EMAIL": "true",
            ], fileKeys: Self.fileKeys)
        let file = #"{"oidc": {"providers": {"gitlab": {"client_id": "from-file", "issuer": "https://gitlab.com"}}}}"#
        let c = try AuthConfig.parse(Data(file.utf8), host: "127.0.0.1", port: 8080, availableProviders: ["email", "oidc"], environment: environment)
        var oidc = try #require(c.providerSections["oidc"])
        let entries = try oidc.entries("providers")
        #expect(entries.map(\.name) == ["gitlab", "google"], "an entry set only by variables is an entry")
        var gitlab = entries[0].section, google = entries[1].section
        #expect(try gitlab.string("client_id", default: "") == "from-env" && gitlab.bool("trust_email", default: false))
        #expect(try gitlab.string("issuer", default: "") == "https://gitlab.com")
        #expect(try google.string("client_id", default: "") == "web-client")
        #expect(c.environment?.unused() == [])
    }

    @Test func theEnvironmentWinsOverTheFileKeyByKey() throws {
        let c = try parse(#"{"tokens": {"access_ttl": 600, "refresh_ttl": 86400}, "audience": "file"}"#, ["AUTHD_TOKENS__ACCESS_TTL": "60"])
        #expect(c.tokens.accessTTL == 60 && c.tokens.refreshTTL == 86400 && c.audience == "file")
        let sources = Dictionary(uniqueKeysWithValues: try #require(c.environment).effective().map { ($0.path, $0.source) })
        #expect(sources["tokens.access_ttl"] == .environment("AUTHD_TOKENS__ACCESS_TTL"))
        #expect(sources["tokens.refresh_ttl"] == .file)
        #expect(sources["audience"] == .file)
        #expect(sources["tokens.refresh_reuse_grace"] == .defaults)
    }

    @Test func aMalformedValueIsAnErrorNamingTheVariable() {
        #expect(message(["AUTHD_TOKENS__ACCESS_TTL": "ten"]) == "AUTHD_TOKENS__ACCESS_TTL must be a number (tokens.access_ttl)")
        #expect(message(["AUTHD_TOKENS__ACCESS_TTL": "1.5"]) == "tokens.access_ttl (AUTHD_TOKENS__ACCESS_TTL) must be a whole number, not a fraction")
        #expect(message(["AUTHD_TOKENS__ACCESS_TTL": "999999"]) == "tokens.access_ttl (AUTHD_TOKENS__ACCESS_TTL) must be between 1 and 86400, not 999999")
        #expect(message(["AUTHD_HTTP__TCP": "yes"]) == "AUTHD_HTTP__TCP must be true or false (http.tcp)")
        #expect(message(["AUTHD_PROVIDERS": "email,totp"]) == #"AUTHD_PROVIDERS must be a JSON array (providers), e.g. ["a","b"]"#)
        #expect(message(["AUTHD_TOKENS": "[1]"]) == "AUTHD_TOKENS must be a JSON object (tokens)")
        #expect(message(["AUTHD_TOKENS": #"{"acess_ttl": 5}"#]) == "unknown configuration key tokens.acess_ttl (in AUTHD_TOKENS)")
        #expect(message(["AUTHD_MAIL__TRANSPORT": "pigeon"]) == #"mail.transport must be one of log, outbox, smtp, sendmail, not "pigeon" (set by AUTHD_MAIL__TRANSPORT)"#)
    }

    @Test func aParentAndOneOfItsChildrenIsAnErrorNamingBoth() throws {
        #expect(
            message(["AUTHD_TOKENS": "{}", "AUTHD_TOKENS__ACCESS_TTL": "5"])
                == "AUTHD_TOKENS sets tokens and AUTHD_TOKENS__ACCESS_TTL sets tokens.access_ttl inside it: set the object or its keys, not both")
        #expect(message(["AUTHD_AUDIENCE": "a", "AUTHD_AUDIENCE_FILE": try temporaryFile("b")]) == "AUTHD_AUDIENCE and AUTHD_AUDIENCE_FILE both set audience: set one")
    }

    @Test func fileVariablesReadTheValueLessOneNewlineUnlessTheKeyEndsInFile() throws {
        let password = try temporaryFile("s3cret\n\n")
        let url = try temporaryFile("postgres://authd:pw@db/authd\n")
        let c = try parse([
            "AUTHD_MAIL__SMTP__HOST": "smtp.example.com", "AUTHD_MAIL__SMTP__USERNAME": "u", "AUTHD_MAIL__SMTP__PASSWORD_FILE": password,
            "AUTHD_AUDIENCE_FILE": try temporaryFile("app\n"),
            "AUTHD_ISSUER": "https://auth.example.com", "AUTHD_STORAGE__BACKEND": "postgres", "AUTHD_STORAGE__POSTGRES__URL_FILE": url,
        ])
        #expect(c.audience == "app")
        // `mail.smtp.password_file` is a key itself: the exact key wins and the parser reads the file,
        // which trims its newlines.
        #expect(c.mail.smtp?.password == "s3cret")
        #expect(c.storage.postgres?.url == "postgres://authd:pw@db/authd")
        let sources = Dictionary(uniqueKeysWithValues: try #require(c.environment).effective().map { ($0.path, $0.source) })
        #expect(sources["storage.postgres.url_file"] == .environment("AUTHD_STORAGE__POSTGRES__URL_FILE"))
        #expect(sources["audience"] == .environment("AUTHD_AUDIENCE_FILE"))
        #expect(try parse(["AUTHD_AUDIENCE_FILE": try temporaryFile("two\n\n")]).audience == "two\n")
        #expect(message(["AUTHD_AUDIENCE_FILE": "/nonexistent/authd"]) == "AUTHD_AUDIENCE_FILE: cannot read the file /nonexistent/authd")
    }

    @Test func variablesThatNameNoKeyInUseAreIgnoredWithAWarning() throws {
        let c = try parse([
            "AUTHD_SERVICE_HOST": "10.0.0.1", "AUTHD_PORT_8080_TCP": "tcp://10.0.0.1:8080", "AUTHD_TOKENS__ACESS_TTL": "5", "AUTHD__X": "1",
            "AUTHD_DATA": "/data", "AUTHD_PORT": "tcp://10.0.0.1:8080", "AUTHD_LOG_LEVEL": "debug", "AUTHD_KEY_ENCRYPTION_KEY": "00", "OTHER": "x",
        ])
        #expect(c.tokens.accessTTL == 3600)
        #expect(
            c.environment?.unused() == [
                "AUTHD_PORT_8080_TCP names no configuration key in use; ignored", "AUTHD_SERVICE_HOST names no configuration key in use; ignored",
                "AUTHD_TOKENS__ACESS_TTL names no configuration key in use; ignored", "AUTHD__X names no configuration key in use; ignored",
            ])
    }

    @Test func secretsAreRedactedInWhatCheckShows() {
        let secrets = ConfigSecrets()
        #expect(secrets.redacted("mail.smtp.password", .string("s3cret")) == .string("[redacted]"))
        #expect(secrets.redacted("oidc.providers.google.client_secret", .string("x")) == .string("[redacted]"))
        #expect(secrets.redacted("storage.postgres.url", .string("postgres://authd:pw@db/authd")) == .string("postgres://authd:***@db/authd"))
        #expect(secrets.redacted("storage.postgres.url", .string("postgres://authd@db/authd")) == .string("postgres://authd@db/authd"))
        #expect(secrets.redacted("mail", .object(["smtp": .object(["password": .string("p")])])) == .object(["smtp": .object(["password": .string("[redacted]")])]))
        #expect(secrets.redacted("tokens.access_ttl", .number(5)) == .number(5))
    }

    @Test func aReloadComparesTheValuesInEffectTheVariablesIncluded() throws {
        let c = try parse(#"{"tokens": {"access_ttl": 600}}"#, ["AUTHD_DEVICE__STARTS_PER_IP__LIMIT": "4", "AUTHD_AUDIENCE": "app"])
        let root = try #require(c.environment).applied(to: ["tokens": .object(["access_ttl": .number(600)])])
        #expect(root["audience"] == .string("app"))
        #expect(root["tokens"] == .object(["access_ttl": .number(600)]))
        guard case .object(let device)? = root["device"], case .object(let rule)? = device["starts_per_ip"] else {
            Issue.record("no device.starts_per_ip in \(root)")
            return
        }
        #expect(rule["limit"] == .number(4))
    }
}
