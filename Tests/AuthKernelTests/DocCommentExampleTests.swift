import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Testing

/// The examples in the SDK's doc comments, as code that compiles and runs: GuideSnippetsTests
/// checks that every line of them stands here or in other compiled code.
struct DocCommentExampleTests {
    // ConfigSection: a provider reads its section in its initialiser.
    struct LinkSettings {
        var linkTTL: Int
        var allowedDomains: [String]
        var perAddress: RateLimitRule

        init(kernel: Kernel, config: inout ConfigSection) throws {
            linkTTL = try config.seconds("link_ttl", default: 900)
            allowedDomains = try config.strings("allowed_domains", default: [])
            perAddress = try config.rule("per_address", default: RateLimitRule(limit: 5, window: 3600))
        }
    }

    @Test func configSectionReadsTypedKeysAndRefusesTheRest() async throws {
        let h = try await TestHarness.make(providers: [])
        var config = ConfigSection(path: "magic", values: ["link_ttl": .number(600), "allowed_domains": .array([.string("example.com")])])
        let settings = try LinkSettings(kernel: h.kernel, config: &config)
        #expect(settings.linkTTL == 600 && settings.allowedDomains == ["example.com"] && settings.perAddress.limit == 5)
        try config.rejectUnknownKeys()
        var typo = ConfigSection(path: "magic", values: ["link_tll": .number(600)])
        _ = try LinkSettings(kernel: h.kernel, config: &typo)
        #expect(throws: ConfigError("unknown configuration key magic.link_tll")) { try typo.rejectUnknownKeys() }
        var wrong = ConfigSection(path: "magic", values: ["link_ttl": .string("ten minutes")])
        #expect(throws: ConfigError.self) { try LinkSettings(kernel: h.kernel, config: &wrong) }
    }

    // AuthProvider: the smallest provider.
    struct MagicProvider: AuthProvider {
        static let id = "magic"
        let kernel: Kernel
        init(kernel: Kernel, config: inout ConfigSection) throws { self.kernel = kernel }
        func routes() -> RouteCollection<AuthRequestContext> {
            let routes = RouteCollection(context: AuthRequestContext.self)
            routes.post("magic/sign-in") { request, context in HTTPResponse.Status.noContent }
            return routes
        }
    }

    @Test func theSmallestProviderIsMounted() async throws {
        let h = try await TestHarness.make(providers: [MagicProvider.self], config: #"{"providers":["magic"]}"#)
        #expect(h.routes.contains("POST /api/v1/auth/magic/sign-in"))
        try await h.test { client async throws in
            #expect(try await client.send(.post, "/api/v1/auth/magic/sign-in").status == .noContent)
        }
    }

    // SignInPolicy: refuse outside work hours.
    struct WorkHoursOnly: SignInPolicy {
        let isWorkHours: @Sendable () -> Bool
        func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
            isWorkHours() ? .allow : .refuse(AuthError(status: .forbidden, code: "OUTSIDE_WORK_HOURS", message: "Come back at 9."))
        }
    }

    // RateLimiter: two rules, all or none; SingleUseTokens: a link; AuthError: matched by code.
    struct Limits {
        var verifiesPerIP = RateLimitRule(limit: 10, window: 60)
        var attemptsPerCode = RateLimitRule(limit: 1, window: 60)
    }

    static func verify(_ kernel: Kernel, settings: Limits, code: String, context: AuthRequestContext) async throws {
        try await kernel.rateLimiter.consume([
            RateLimitCharge(settings.verifiesPerIP, key: "invite.verify.ip:\(context.clientKey)"),
            RateLimitCharge(settings.attemptsPerCode, key: "invite.verify.code:\(code)"),
        ])
    }

    static func link(_ kernel: Kernel, email: String, issuer: String) async throws -> String {
        let token = try await kernel.tokens.issue(purpose: "magic.link", subject: email, ttl: 900)
        try await kernel.mailer.send(template: "magic.link", to: email, values: ["link": issuer + "/magic?token=" + token])
        return token
    }

    static func open(_ kernel: Kernel, token: String) async throws -> String {
        guard let redeemed = try await kernel.tokens.redeem(purpose: "magic.link", token: token) else { throw AuthError.invalidCode }
        return redeemed.subject
    }

    static func codeIsRight(_ kernel: Kernel, email: String, code: String, policy: CodePolicy) async throws -> Bool {
        do { try await kernel.codes.verify(purpose: "magic", key: email, code: code, policy: policy) }
        catch AuthError.invalidCode { return false }
        return true
    }

    @Test func aLinkIsRedeemedOnceAndAWrongCodeIsFalse() async throws {
        let h = try await TestHarness.make(providers: [])
        let template = MailTemplate.code(subject: "Your {{product_name}} code: {{code}}", lead: "Your code is", tail: "It expires in {{lifetime}}.")
        #expect(template.subject.contains("{{code}}"))
        try h.kernel.mailer.register("magic.link", MailTemplate(subject: "Sign in", text: "Open {{link}}", html: "<a href=\"{{link}}\">Sign in</a>"))
        let token = try await Self.link(h.kernel, email: "ada@example.com", issuer: h.kernel.issuer)
        #expect(try h.mail(to: "ada@example.com").first?.link?.hasSuffix(token) == true)
        #expect(try await Self.open(h.kernel, token: token) == "ada@example.com")
        await #expect(throws: AuthError.invalidCode) { try await Self.open(h.kernel, token: token) }
        let policy = CodePolicy(ttl: 300, resendInterval: 0, maxAttempts: 3, maxFailures: 5, failureWindow: 60)
        _ = try await h.kernel.codes.issue(purpose: "magic", key: "ada@example.com", policy: policy, payload: [:])
        #expect(try await Self.codeIsRight(h.kernel, email: "ada@example.com", code: "000000x", policy: policy) == false)
    }

    // OutboundHTTP: a key set fetched through kernel.http (a stand-in here).
    struct KeySet: Decodable {
        var keys: [[String: String]]
    }

    struct StandIn: OutboundHTTP {
        func send(_ request: OutboundRequest) async throws -> OutboundResponse {
            OutboundResponse(status: .ok, body: Array(#"{"keys":[{"kid":"k1"}]}"#.utf8))
        }
    }

    static func keys(_ kernel: Kernel) async throws -> KeySet {
        let response = try await kernel.http.send(OutboundRequest(url: "https://idp.example.com/jwks"))
        guard response.status == .ok else { throw AuthError.unavailable }
        let keys = try JSONDecoder().decode(KeySet.self, from: Data(response.body))
        return keys
    }

    @Test func kernelHTTPIsWhatTheHarnessWasGiven() async throws {
        let h = try await TestHarness.make(providers: [], http: StandIn())
        #expect(try await Self.keys(h.kernel).keys == [["kid": "k1"]])
        let none = try await TestHarness.make(providers: [])
        await #expect(throws: OutboundHTTPUnavailable.self) { try await Self.keys(none.kernel) }
    }

    // LogSafe: an attacker's value in a log line.
    @Test func logSafeEscapesWhatALogLineQuotes() {
        struct Header { var alg: String }
        let header = Header(alg: "none\nforged line")
        let logs = LogCapture()
        let logger = logs.logger()
        logger.info("token refused", metadata: ["alg": "\(LogSafe.text(header.alg))"])
        #expect(!LogSafe.text(header.alg).contains("\n"))
    }

    @Test func aPolicyRefusesOutsideWorkHours() async throws {
        let h = try await TestHarness.make(providers: [])
        h.kernel.signInHooks.register(WorkHoursOnly(isWorkHours: { false }))
        let user = try await h.kernel.users.signIn(.init(identity: Identity(provider: "test", subject: "ada"), email: nil, emailVerified: false), linkingTo: nil)
        await #expect(throws: AuthError(status: .forbidden, code: "OUTSIDE_WORK_HOURS", message: "Come back at 9.")) {
            _ = try await h.kernel.sessions.signIn(user, amr: ["test"], device: .none)
        }
    }

    // PageValue.time and PageStep.backToAccount: an account section's times in words, and its notice.
    @Test func aTimeReadsInWordsWithTheExactTimeBesideAndAnAccountFormReturnsWithANotice() async throws {
        let h = try await TestHarness.make(providers: [])
        let kernel = h.kernel
        let createdAt = kernel.clock.now()
        let row: [String: PageValue] = ["added": .time(createdAt, now: kernel.clock.now(), messages: kernel.messages)]
        guard case .list(let parts) = row["added"], let time = parts.first else { Issue.record("a time is a section of one row"); return }
        #expect(time["words"] == .text("just now") && time["iso"] != nil && time["exact"] != nil)
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        func words(_ secondsAgo: Double) -> PageValue? {
            guard case .list(let parts) = PageValue.time(now.addingTimeInterval(-secondsAgo), now: now, messages: kernel.messages) else { return nil }
            return parts.first?["words"]
        }
        #expect(words(59) == .text("just now") && words(60) == .text("1 minute ago") && words(3599) == .text("59 minutes ago"))
        #expect(words(3600) == .text("1 hour ago") && words(86_399) == .text("23 hours ago") && words(86_400) == .text("yesterday"))
        #expect(words(2 * 86_400) == .text("2 days ago") && words(40 * 86_400) == .text("on 9 Oct 2026") && words(-30) == .text("just now"))
        guard case .list(let exact) = PageValue.time(now, now: now, messages: kernel.messages) else { return }
        #expect(exact.first?["exact"] == .text("18 Nov 2026, 11:06 UTC") && exact.first?["iso"] == .text("2026-11-18T11:06:40Z"))
        // In German, as a request asking for it is answered: words, the date and the time its way.
        RequestLanguage.$current.withValue(RequestLanguage(fixed: "de")) {
            #expect(words(59) == .text("gerade eben") && words(60) == .text("vor 1 Minute") && words(3 * 86_400) == .text("vor 3 Tagen"))
            #expect(words(40 * 86_400) == .text("am 9. Okt. 2026") && words(86_400) == .text("gestern"))
            guard case .list(let exact) = PageValue.time(now, now: now, messages: kernel.messages) else { return }
            #expect(exact.first?["exact"] == .text("18. Nov. 2026, 11:06 UTC"))
        }

        let step: PageStep = .backToAccount(notice: "Passkey renamed.")
        #expect(step.notice == "Passkey renamed." && step.returnsToAccount && !PageStep(template: "passkey.account").returnsToAccount)
    }
}

/// The language examples of the guide and of ``Messages``, ``AuthError/worded(_:_:)`` and ``MailTemplate/code(catalog:)``.
struct LanguageExampleTests {
    struct InviteProvider: AuthProvider {
        static let id = "invite"
        static let messageCatalogs = [
            MessageCatalogDeclaration("en", source: """
                msgctxt "invite.code_sent"
                msgid "We sent a code to {{email}}."
                msgstr ""

                msgctxt "invite.wrong_code"
                msgid "That code is not the one we sent."
                msgstr ""

                msgctxt "invite.code.subject"
                msgid "Your {{product_name}} code: {{code}}"
                msgstr ""

                msgctxt "invite.code.lead"
                msgid "Your code is"
                msgstr ""

                msgctxt "invite.code.tail"
                msgid "It expires in {{lifetime}}."
                msgstr ""
                """),
            MessageCatalogDeclaration("de", source: """
                msgctxt "invite.code_sent"
                msgid "We sent a code to {{email}}."
                msgstr "Wir haben einen Code an {{email}} geschickt."

                msgctxt "invite.code.tail"
                msgid "It expires in {{lifetime}}."
                msgstr "Er gilt {{lifetime}} lang."
                """),
        ]
        static let mailTemplates = [MailTemplateDeclaration("invite.code", "The code.", .code(catalog: "invite.code"))]
        let kernel: Kernel
        init(kernel: Kernel, config: inout ConfigSection) throws { self.kernel = kernel }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }

        func sentence(email: String) -> String {
            let sent = kernel.messages.text("invite.code_sent", ["email": email])
            return sent
        }

        func check(_ code: String) throws {
            guard code == "123456" else { throw AuthError.invalidCode.worded("invite.wrong_code") }
        }

        func step(after error: AuthError) -> PageStep {
            let notice = kernel.messages.sentence(error)
            return PageStep(template: "invite.code", error: notice, status: error.status)
        }
    }

    @Test func aProviderSpeaksThePersonsLanguageOnItsPagesAndInItsMail() async throws {
        let h = try await TestHarness.make(providers: [InviteProvider.self], config: #"{"providers":["invite"],"mail":{"transport":"outbox"}}"#)
        let provider = InviteProvider(kernel: h.kernel)
        #expect(provider.sentence(email: "a@b.co") == "We sent a code to a@b.co.")
        RequestLanguage.$current.withValue(RequestLanguage(fixed: "de")) {
            #expect(provider.sentence(email: "a@b.co") == "Wir haben einen Code an a@b.co geschickt.")
            do {
                try provider.check("000000")
                Issue.record("a wrong code passed")
            } catch let error as AuthError {
                // German lacks the key: its English, not the code's general German sentence.
                #expect(provider.step(after: error).error == "That code is not the one we sent.")
                #expect(error == AuthError.invalidCode, "the API still answers INVALID_CODE")
            } catch {
                Issue.record("\(error)")
            }
        }
        // The doc comments' own lines, as written there.
        let kernel = h.kernel
        let notice = kernel.messages.text("passkey.renamed")
        #expect(notice == "passkey.renamed", "a key no catalog has comes back as itself")
        let template = MailTemplate.code(catalog: "email.sign_in_code")
        let when = kernel.messages.mailTime(kernel.clock.now(), language: "de")
        #expect(when.contains("UTC") && when != Timestamp.string(kernel.clock.now()))
        #expect(kernel.messages.mailTime(kernel.clock.now(), language: "en") == Timestamp.string(kernel.clock.now()))
        #expect(template.subject == "[[email.sign_in_code.subject]]")
        let error = AuthError.invalidCode
        let step = PageStep(template: "sms.code", error: kernel.messages.sentence(error), status: error.status)
        #expect(step.error == AuthError.invalidCode.message)
        #expect(throws: AuthError.self) {
            throw AuthError.invalidRequest("The password must be at least 12 characters.").worded("password.too_short", ["min": "12"])
        }

        // The mail, in the recipient's language, its lifetime in words.
        try await RequestLanguage.$current.withValue(RequestLanguage(fixed: "de")) {
            try await h.kernel.mailer.send(template: "invite.code", to: "ina@example.com", code: "123456", lifetime: 600)
        }
        let mail = try #require(try h.mail(to: "ina@example.com").last)
        #expect(mail.subject == "Your authd code: 123456", "German lacks the subject: English")
        #expect(mail.text == "Your code is 123456.\n\nEr gilt 10 Minuten lang.")
    }
}

extension LanguageExampleTests.InviteProvider {
    init(kernel: Kernel) { self.kernel = kernel }
}
