import AuthKernel
import AuthKernelTesting
import AuthdCore
import Foundation
import Hummingbird
import ServiceLifecycle
import Testing

/// Contract §17, "Secrets stay out of logs and `check`" (issue #46): a setting declared secret and a
/// leaf key named as one are redacted in `authd check`, `authd settings`, the console and every log
/// line; `_file` paths are shown; no service logs what it was configured with.
struct ConfigSecretsTests {
    /// A third party's provider: one secret declared with a name nothing would guess, one with a
    /// default, one named as a secret without the flag, and a path to a file holding one.
    struct Signed: AuthProvider {
        static let id = "signed"
        static let settings = [
            Setting("token_signing_value", .string, default: "none", secret: true, "What signs the provider's tokens."),
            Setting("fallback_signing_value", .string, default: "DEFAULT-SIGNING-VALUE-5b07", secret: true, "Signs when none is set."),
            Setting("upstream_api_key", .string, default: "none", "The upstream's key: a secret by its name."),
            Setting("upstream_secret_file", .string, default: "none", "Where the upstream's secret is read from."),
            Setting("audience", .string, default: "signed", "Not a secret."),
        ]
        let value: String
        init(kernel: Kernel, config: inout ConfigSection) throws {
            value = try config.string("token_signing_value", default: "")
            _ = try config.string("fallback_signing_value", default: "DEFAULT-SIGNING-VALUE-5b07")
            _ = try config.optionalString("upstream_api_key")
            _ = try config.optionalString("upstream_secret_file")
            _ = try config.string("audience", default: "signed")
        }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
        /// Background work holding the secret in a plain struct, as a provider's author would write it.
        var services: [any Service] { [Rotation(signingValue: value)] }
    }

    struct Rotation: Service {
        let signingValue: String
        func run() async throws { try? await gracefulShutdown() }
    }

    static let config = #"""
        {"providers": ["signed"], "signed": {"token_signing_value": "TOKEN-SIGNING-VALUE-93d1", "upstream_api_key": "UPSTREAM-API-KEY-1f2e",
         "upstream_secret_file": "/run/secrets/upstream", "audience": "app"}}
        """#

    @Test func aThirdPartysSettingDeclaredSecretIsRedactedInCheckSettingsAndTheLog() async throws {
        let h = try await TestHarness.make(providers: [Signed.self], config: Self.config)
        // The services run as the server runs them: their group logs each at debug level (the capture keeps trace).
        try await h.test { _ in }
        #expect(h.logs.contains("Starting service"), "the service group's debug lines were captured")
        #expect(h.logs.contains("Rotation"), "a service is named by its type")
        for secret in ["TOKEN-SIGNING-VALUE-93d1", "UPSTREAM-API-KEY-1f2e"] {
            #expect(!h.logs.contains(secret), "\(secret) in the log:\n\(h.logs.all.filter { $0.contains(secret) }.joined(separator: "\n"))")
        }

        let check = await (try AdminOperations(server: h.server, dataFolder: h.folder)).run(.check).text
        #expect(check.contains(#"  setting     signed.token_signing_value = "[redacted]" (set)"#), "\(check)")
        #expect(check.contains("  setting     signed.fallback_signing_value = [redacted] (default)"), "\(check)")
        #expect(check.contains(#"  setting     signed.upstream_api_key = "[redacted]" (set)"#), "\(check)")
        #expect(check.contains(#"  setting     signed.upstream_secret_file = "/run/secrets/upstream" (set)"#), "\(check)")
        #expect(check.contains(#"  setting     signed.audience = "app" (set)"#), "\(check)")
        for secret in ["TOKEN-SIGNING-VALUE-93d1", "DEFAULT-SIGNING-VALUE-5b07", "UPSTREAM-API-KEY-1f2e"] {
            #expect(!check.contains(secret))
        }

        // `authd settings` and docs/configuration.md: marked secret, a default never shown.
        let settings = SettingsReference.text([Signed.self]) + SettingsReference.markdown([Signed.self])
        #expect(!settings.contains("DEFAULT-SIGNING-VALUE-5b07"))
        #expect(settings.contains("| `signed.token_signing_value` | string, secret | none |"))
        #expect(settings.contains("| `signed.fallback_signing_value` | string, secret | [redacted] |"))
        #expect(settings.contains("| `signed.upstream_api_key` | string, secret | none |"))
        #expect(settings.contains("| `signed.upstream_secret_file` | string | none |"))
        #expect(settings.contains("| `signed.audience` | string | signed |"))
    }

    @Test func aSecretIsNamedByDeclarationOrByItsLeafKeyAndAFileIsShownByItsPath() {
        let secrets = ConfigSecrets(providers: [Signed.self])
        let hidden = JSONValue.string("[redacted]")
        // Declared: the kernel's own and the provider's, whatever their names.
        #expect(secrets.redacted("mail.smtp.password", .string("p")) == hidden)
        #expect(secrets.redacted("signed.token_signing_value", .string("v")) == hidden)
        #expect(secrets.redacted("signed", .object(["token_signing_value": .string("v"), "audience": .string("app")]))
            == .object(["token_signing_value": hidden, "audience": .string("app")]))
        // By name, at any depth, in a list of objects too.
        for path in ["oidc.providers.corp.client_secret", "x.upstream_api_key", "apple.private_key_path", "x.db_password", "x.SECRET"] {
            #expect(secrets.redacted(path, .string("v")) == hidden, "\(path)")
        }
        #expect(secrets.redacted("x.hooks", .array([.object(["signing_secret": .string("v"), "url": .string("https://a:b@h/")])]))
            == .array([.object(["signing_secret": hidden, "url": .string("https://a:***@h/")])]))
        // The password provider's policy and the kernel's API key limits are sections, not secrets.
        #expect(secrets.redacted("password.min_length", .number(8)) == .number(8))
        #expect(secrets.redacted("password", .object(["min_length": .number(8)])) == .object(["min_length": .number(8)]))
        #expect(secrets.redacted("api_keys.max_per_user", .number(50)) == .number(50))
        // A file is shown by its path, a secret's file too; a URL's password is `***`.
        for path in ["mail.smtp.password_file", "webhooks[0].secret_file", "oidc.providers.corp.client_secret_file", "signed.upstream_secret_file"] {
            #expect(secrets.redacted(path, .string("/run/secrets/x")) == .string("/run/secrets/x"), "\(path)")
        }
        #expect(secrets.redacted("storage.postgres.url", .string("postgres://authd:pw@db/authd")) == .string("postgres://authd:***@db/authd"))
        #expect(ConfigSecrets.redactedURL("https://hooks.example.com/a@b") == "https://hooks.example.com/a@b")
        // A password holding `@` or `/` is hidden whole.
        #expect(ConfigSecrets.redactedURL("postgres://u:p@ss@db/authd") == "postgres://u:***@db/authd")
        #expect(ConfigSecrets.redactedURL("postgres://u:p/w@db/authd") == "postgres://u:***@db/authd")
    }

    /// What holds configuration or a secret names itself only, wherever it is interpolated or dumped.
    @Test func whatHoldsTheConfigurationDescribesItselfByName() throws {
        let data = #"{"mail": {"transport": "outbox", "smtp": {"host": "smtp.example.com", "username": "u", "password": "SMTP-PASSWORD-77aa"}}}"#
        let config = try AuthConfig.parse(Data(data.utf8), host: "127.0.0.1", port: 8080, availableProviders: [])
        let section = ConfigSection(path: "signed", values: ["token_signing_value": .string("TOKEN-SIGNING-VALUE-93d1")])
        for value in [config as Any, config.mail, try #require(config.mail.smtp), section] {
            var dumped = ""
            dump(value, to: &dumped)
            let written = String(describing: value) + String(reflecting: value) + dumped
            #expect(!written.contains("SMTP-PASSWORD-77aa") && !written.contains("TOKEN-SIGNING-VALUE-93d1"), "\(type(of: value)): \(written)")
        }
    }
}
