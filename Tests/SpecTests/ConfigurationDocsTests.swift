@testable import AuthKernel
import AuthKernelTesting
import AuthdCore
import AuthdServer
import Crypto
import Foundation
import Synchronization
import Testing

/// `docs/configuration.md` names exactly the keys the parser and the providers read: a key
/// documented but unknown, or read but undocumented, fails here.
struct ConfigurationDocsTests {
    static let docsPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/configuration.md").path

    /// The keys in the first column of the docs' tables: `a.b.c` names a key; a bare `d` after it
    /// is a sibling (`a.b.d`).
    static func documented() throws -> Set<String> {
        let text = try String(contentsOfFile: docsPath, encoding: .utf8)
        var keys = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let first = line.dropFirst(2).prefix { $0 != "|" }
            var parent = ""
            for match in first.matches(of: /`([a-z0-9_.]+)`/) {
                let name = String(match.1)
                if name.contains(".") {
                    keys.insert(name)
                    parent = String(name[..<name.lastIndex(of: ".")!])
                } else {
                    keys.insert(parent.isEmpty ? name : parent + "." + name)
                }
            }
        }
        return keys
    }

    /// A configuration that makes every section be read: every provider, SMTP mail, TLS, webhooks,
    /// APNs, PostgreSQL settings.
    static func everything(folder: String) throws -> String {
        let file = folder + "/secret", hook = folder + "/webhook-secret", p8 = folder + "/apns.p8"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        try ("whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()).write(toFile: hook, atomically: true, encoding: .utf8)
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: p8, atomically: true, encoding: .utf8)
        return #"""
            {"issuer":"https://auth.example.test","providers":["email","pin","password","apple","anonymous","totp","passkey","approval","oidc"],
             "mail":{"transport":"smtp","smtp":{"host":"smtp.example.test","username":"u","password_file":"\#(file)"}},
             "webhooks":[{"url":"https://hooks.example.test/a","secret_file":"\#(hook)","events":["user.created"]}],
             "push":{"apns":{"team_id":"ABCDE12345","key_id":"KEY1234567","private_key_path":"\#(p8)","topics":["com.example.app"]}},
             "apple":{"audiences":["com.example.app"],"jwks_url":"http://127.0.0.1:1/keys"},
             "passkeys":{"rp_id":"example.test"}}
            """#
    }

    @Test func theDocsNameExactlyTheKeysTheParserReads() async throws {
        let documented = try Self.documented()
        #expect(documented.count > 100)
        let recorder = ConfigSection.KeyRecorder()
        let folder = temporaryFolder()
        let config = try Self.everything(folder: folder)
        try await ConfigSection.$recorder.withValue(recorder) {
            let registry = ProviderRegistry(Authd.builtInProviders)
            _ = try AuthConfig.parse(
                Data(config.utf8), host: "127.0.0.1", port: 0, availableProviders: registry.ids, defaultProviders: registry.defaultIDs,
                sectionNames: registry.sectionNames)
            let h = try await TestHarness.make(
                providers: Authd.builtInProviders, config: config, folder: folder + "/data", configure: { $0.addFullServerParts() })
            await h.server.close()
        }
        // Keys read only when present: TLS files, the PostgreSQL settings.
        try ConfigSection.$recorder.withValue(recorder) {
            let registry = ProviderRegistry(Authd.builtInProviders)
            let parseOnly = #"""
                {"issuer":"https://auth.example.test","http":{"tls":{"cert_file":"\#(folder)/secret","key_file":"\#(folder)/secret"}},
                 "storage":{"backend":"postgres","postgres":{"url":"postgres://authd@127.0.0.1/authd","pool_size":4,"tls":"disable"}}}
                """#
            _ = try AuthConfig.parse(Data(parseOnly.utf8), host: "127.0.0.1", port: 0, availableProviders: registry.ids, sectionNames: registry.sectionNames)
        }
        // A section is documented by its keys; a rate limit's `limit` and `window` with the rule; a
        // list's entries (`webhooks[0].url`) as the list's (`webhooks.url`).
        let all = recorder.paths.withLock { $0 }.map { $0.replacing(/\[\d+\]/, with: "") }
        let read = Set(all.filter { path in
            !path.hasSuffix(".limit") && !path.hasSuffix(".window") && !all.contains { $0.hasPrefix(path + ".") && !$0.hasSuffix(".limit") && !$0.hasSuffix(".window") }
        })
        // AUTHD_…_FILE sets these keys verbatim (contract §14): the list must name every key ending in
        // `_file` that a variable can address (not inside a list).
        let declaredFileKeys = Authd.builtInProviders.flatMap { type in type.settings.map { "\(type.configSection).\($0.key)" } }.filter { $0.hasSuffix("_file") }
        let fileKeys = Set(recorder.paths.withLock { $0 }.filter { $0.hasSuffix("_file") && !$0.contains("[") })
        #expect(fileKeys == AuthConfig.fileKeys.union(declaredFileKeys))
        #expect(documented.subtracting(read).sorted() == [], "documented, but no parser reads them")
        #expect(read.subtracting(documented).sorted() == [], "read, but not in docs/configuration.md")
    }

    /// The providers' part of docs/configuration.md is what their declarations generate, byte for
    /// byte (`authd settings --markdown`), and every declared key is one the provider reads.
    @Test func theProviderTablesAreGeneratedFromTheDeclarations() async throws {
        let text = try String(contentsOfFile: Self.docsPath, encoding: .utf8)
        let start = try #require(text.range(of: SettingsReference.begin)), end = try #require(text.range(of: SettingsReference.end))
        #expect(String(text[start.lowerBound..<end.upperBound]) + "\n" == SettingsReference.markdown(Authd.builtInProviders))

        let recorder = ConfigSection.KeyRecorder()
        let folder = temporaryFolder()
        try await ConfigSection.$recorder.withValue(recorder) {
            let h = try await TestHarness.make(
                providers: Authd.builtInProviders, config: try Self.everything(folder: folder), folder: folder + "/data",
                configure: { $0.addFullServerParts() })
            await h.server.close()
        }
        let read = recorder.paths.withLock { $0 }
        for type in Authd.builtInProviders {
            for setting in type.settings {
                #expect(read.contains("\(type.configSection).\(setting.key)"), "\(type.id) declares \(setting.key) but never reads it")
            }
        }
    }
}
