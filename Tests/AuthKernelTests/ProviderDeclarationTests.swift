import AuthKernel
import AuthKernelTesting
import AuthdCore
import AuthdServer
import Foundation
import Hummingbird
import Testing

/// Contract of issue #35 point 5: a provider declares its settings, mail and audit events; the
/// server holds it to them and shows them.
struct ProviderDeclarationTests {
    struct Declared: AuthProvider {
        static let id = "declared"
        static let settings = [
            Setting("ttl", .seconds, default: "900", "How long."),
            Setting.rateLimit("sends_per_ip", default: RateLimitRule(limit: 3, window: 60), "Sends per network."),
        ]
        static let auditEvents = [AuditEventDeclaration("declared_thing", "A thing happened.")]
        static let mailTemplates = [
            MailTemplateDeclaration("declared.note", "A note.", MailTemplate(subject: "Note", text: "A note {{x}}", html: "<p>A note {{x}}</p>"))
        ]
        let kernel: Kernel
        init(kernel: Kernel, config: inout ConfigSection) throws {
            self.kernel = kernel
            _ = try config.seconds("ttl", default: 900)
            _ = try config.rule("sends_per_ip", default: RateLimitRule(limit: 3, window: 60))
            if try config.bool("sneaky", default: false) { throw ConfigError("unreachable: sneaky is not declared") }
        }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
    }

    struct Honest: AuthProvider {
        static let id = "honest"
        static let settings = [Setting("ttl", .seconds, default: "900", "How long.")]
        static let mailTemplates = [MailTemplateDeclaration("other.note", "Someone else's.", MailTemplate(subject: "x", text: "x", html: "x"))]
        init(kernel: Kernel, config: inout ConfigSection) throws { _ = try config.seconds("ttl", default: 900) }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
    }

    @Test func readingAnUndeclaredSettingStopsStartUp() async throws {
        await #expect(throws: ConfigError(#"the provider "declared" reads the setting declared.sneaky, which its `settings` do not declare"#)) {
            _ = try await TestHarness.make(providers: [Declared.self], config: #"{"providers":["declared"]}"#)
        }
    }

    @Test func aDeclaredTemplateOutsideTheProvidersNameStopsStartUp() async throws {
        await #expect(throws: ConfigError.self) {
            _ = try await TestHarness.make(providers: [Honest.self], config: #"{"providers":["honest"]}"#)
        }
    }

    @Test func declaredMailIsRegisteredAndEventsKnownBeforeTheProviderStarts() async throws {
        struct Quiet: AuthProvider {
            static let id = "declared"
            static let settings = Declared.settings
            static let auditEvents = Declared.auditEvents
            static let mailTemplates = Declared.mailTemplates
            let kernel: Kernel
            init(kernel: Kernel, config: inout ConfigSection) throws {
                self.kernel = kernel
                _ = try config.seconds("ttl", default: 900)
            }
            func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
        }
        let h = try await TestHarness.make(providers: [Quiet.self], config: #"{"providers":["declared"],"declared":{"ttl":60}}"#)
        #expect(h.kernel.mailer.templates.names.contains("declared.note"))
        #expect(h.kernel.audit.declaredEvents.contains { $0.name == "declared_thing" })
        await h.kernel.audit.record("declared_thing")
        await h.kernel.audit.record("made_up_thing")
        await h.kernel.audit.record("made_up_thing")
        #expect(try h.audit(event: "declared_thing").count == 1)
        // Written all the same, and the log says once that nothing declares it.
        #expect(h.logs.count("an audit event no provider declares was recorded") == 1)
        #expect(throws: UndeclaredAuditEvent.self) { try h.audit(event: "made_up_thing") }

        // `authd check` shows each declared setting with its value and where it comes from, the mail and the events.
        let check = await (try AdminOperations(server: h.server, dataFolder: h.folder)).run(.check).text
        #expect(check.contains("provider      declared\n"))
        #expect(check.contains("  setting     declared.ttl = 60 (set)\n"))
        #expect(check.contains("  setting     declared.sends_per_ip = 3 per 60 s (default)\n"))
        #expect(check.contains("  mail        declared.note\n"))
        #expect(check.contains("  audit       declared_thing\n"))
        await h.server.close()
    }

    /// Every event name a built-in provider or an example passes to `audit.record` as a literal is
    /// declared, by the kernel or by that provider.
    @Test func everyRecordedEventIsDeclared() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let declared = Set((AuditEventDeclaration.kernel + Authd.builtInProviders.flatMap { $0.auditEvents }).map(\.name)).union(["magic_link_sent"])
        var recorded = Set<String>()
        for folder in ["Sources", "Examples"] {
            let walker = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = walker?.nextObject() as? URL {
                guard url.pathExtension == "swift", !url.path.contains("/.build") else { continue }
                let text = try String(contentsOf: url, encoding: .utf8)
                for match in text.matches(of: /audit\??\.record\("([a-z_]+)"/) { recorded.insert(String(match.1)) }
            }
        }
        #expect(recorded.count > 15)
        #expect(recorded.subtracting(declared).sorted() == [])
    }
}
