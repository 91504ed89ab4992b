import EmailProvider
import AuthdCore
@testable import AuthdServer
@testable import AuthKernel
import AuthKernelTesting
import Foundation
import Hummingbird
import Logging
import Testing

struct MailComposerTests {
    let message = MailMessage(to: "anna@example.com", subject: "Ihr Code für Äpp: 123456", text: "Code 123456\n.leading dot", code: "123456")

    @Test func composesAnRFC5322MultipartMessage() throws {
        let raw = try MailComposer.compose(message, from: "Äpp Team <no-reply@example.com>", date: Date(timeIntervalSince1970: 1_800_000_000))
        let lines = raw.components(separatedBy: "\r\n")
        #expect(lines.contains("Date: Fri, 15 Jan 2027 08:00:00 +0000"))
        #expect(lines.contains { $0.hasPrefix("Message-ID: <") && $0.hasSuffix("@example.com>") })
        #expect(lines.contains { $0.hasPrefix("From: =?UTF-8?B?") && $0.hasSuffix(" <no-reply@example.com>") })
        #expect(lines.contains("To: anna@example.com"))
        #expect(lines.contains { $0.hasPrefix("Subject: =?UTF-8?B?") })
        #expect(lines.contains("MIME-Version: 1.0"))
        #expect(lines.contains("Content-Type: text/plain; charset=utf-8") && lines.contains("Content-Type: text/html; charset=utf-8"))
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(!raw.contains("\n") || raw.replacingOccurrences(of: "\r\n", with: "").contains("\n") == false)
        // The subject decodes back to the original.
        let encoded = lines.drop { !$0.hasPrefix("Subject:") }.prefix { $0.hasPrefix("Subject:") || $0.hasPrefix(" ") }
        let decoded = encoded.map { $0.replacingOccurrences(of: "Subject: ", with: "").trimmingCharacters(in: .whitespaces) }
            .map { String($0.dropFirst("=?UTF-8?B?".count).dropLast(2)) }
            .compactMap { Data(base64Encoded: $0) }.reduce(Data(), +)
        #expect(String(decoding: decoded, as: UTF8.self) == message.subject)
    }

    @Test(arguments: [
        ("to", "anna@example.com\r\nBcc: everyone@example.com"), ("to", "anna@example.com\nX: y"), ("from", "App <a@b.c>\r\nBcc: x@y.z"),
        ("subject", "Hi\r\nBcc: x@y.z"), ("to", "nul\u{0}@example.com"),
    ])
    func headerInjectionIsRefusedBeforeSending(field: String, value: String) {
        var m = message
        var from = "App <no-reply@example.com>"
        switch field {
        case "to": m.to = value
        case "from": from = value
        default: m.subject = value
        }
        #expect(throws: MailError.self) { try MailComposer.compose(m, from: from) }
    }

    @Test func dotStuffingAndCRLF() {
        #expect(SMTPClient.dotStuffed("a\n.b\r\n..c\n") == "a\r\n..b\r\n...c\r\n")
    }

    @Test func mailboxParsing() throws {
        let m = try MailAddress(parsing: "\"Acme Support\" <help@acme.io>", field: "From")
        #expect(m.name == "Acme Support" && m.address == "help@acme.io" && m.domain == "acme.io")
        #expect(try MailAddress(parsing: "plain@acme.io", field: "To").name == nil)
        #expect(throws: MailError.self) { try MailAddress(parsing: "no at sign", field: "To") }
    }
}

struct MailTemplateTests {
    @Test func rendersDefaultsAndOperatorOverrides() throws {
        let folder = temporaryFolder()
        let logs = LogCapture()
        let templates = MailTemplates(folder: folder, productName: "Acme", logger: logs.logger())
        // A provider's code mail, as providers register theirs; the code is filled in without being passed as a value.
        try templates.register(
            "email.sign_in_code", .code(subject: "Your {{product_name}} sign-in code: {{code}}", lead: "Your code is", tail: "It expires in {{lifetime}}."))
        let m = templates.render("email.sign_in_code", to: "a@b.co", values: ["lifetime": "5 minutes"], code: "123456")
        #expect(m.subject == "Your Acme sign-in code: 123456")
        #expect(m.text == "Your code is 123456.\n\nIt expires in 5 minutes.")
        #expect(m.html?.contains("123456") == true && m.html?.contains("{{") == false)
        #expect(m.template == "email.sign_in_code")
        let notice = templates.render("kernel.sign_in_method_added", to: "a@b.co", values: ["method": "a PIN", "when": "now"])
        #expect(notice.subject.contains("Acme") && notice.text.contains("a PIN"))
        // An override under the new name, and one under the old bare name, still read, with a warning naming the new one.
        try "Code for {{product_name}}: {{code}}\n".write(toFile: folder + "/sign_in_code.subject", atomically: true, encoding: .utf8)
        try "<b>{{code}}</b> {{device}}".write(toFile: folder + "/email.sign_in_code.html", atomically: true, encoding: .utf8)
        let overridden = templates.render("email.sign_in_code", to: "a@b.co", values: ["device": "<script>"], code: "999999")
        #expect(overridden.subject == "Code for Acme: 999999")
        #expect(overridden.html == "<b>999999</b> &lt;script&gt;")
        #expect(overridden.text.contains("999999"))  // the text part keeps its default
        _ = templates.render("email.sign_in_code", to: "a@b.co", values: [:], code: "999999")
        let warnings = logs.all.filter { $0.contains("old name") }
        #expect(warnings.count == 1 && warnings[0].contains("email.sign_in_code.subject"))
        #expect(MailTemplates.lifetime(300) == "5 minutes" && MailTemplates.lifetime(60) == "1 minute" && MailTemplates.lifetime(90) == "90 seconds")
    }

    @Test func aNameIsRegisteredOnceAndNamesItsProvider() throws {
        let templates = MailTemplates(folder: nil, productName: "Acme")
        let mail = MailTemplate.code(subject: "{{code}}", lead: "Code", tail: "Bye.")
        try templates.register("email.sign_in_code", mail)
        let twice = #expect(throws: ConfigError.self) { try templates.register("email.sign_in_code", mail) }
        #expect(twice?.description.contains("registered twice") == true)
        #expect(throws: ConfigError.self) { try templates.register("kernel.sign_in_method_added", mail) }
        for bad in ["sign_in_code", "Email.code", "a.b.c", ".code", "email.", "email.co de"] {
            #expect(throws: ConfigError.self, "\(bad)") { try templates.register(bad, mail) }
        }
    }
}

struct SendmailTransportTests {
    func stub(exitCode: Int) throws -> (script: String, output: String) {
        let folder = temporaryFolder()
        let script = folder + "/sendmail", output = folder + "/received"
        try "#!/bin/sh\necho \"$@\" > \(output).args\ncat > \(output)\nexit \(exitCode)\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        return (script, output)
    }

    /// Sends through the stub. A test running in parallel that starts a process while the stub is
    /// being written hands the child the stub's write descriptor, and exec then fails with "Text
    /// file busy" until that child has gone: retried, as the mail queue would.
    func send(_ message: MailMessage, through script: String, from: String) async throws {
        for attempt in 1...1200 {  // up to a minute: that child may be slow to go on a loaded machine
            do {
                return try await SendmailTransport(path: script).send(message, from: from)
            } catch where "\(error)".contains("Text file busy") && attempt < 1200 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    @Test func pipesTheMessageToSendmailTI() async throws {
        let (script, output) = try stub(exitCode: 0)
        try await send(MailMessage(to: "a@b.co", subject: "Hello", text: "Code 4711"), through: script, from: "App <n@b.co>")
        let received = try String(contentsOfFile: output, encoding: .utf8)
        #expect(received.contains("To: a@b.co\n") && received.contains("Subject: Hello\n") && !received.contains("\r\n"))
        #expect(try String(contentsOfFile: output + ".args", encoding: .utf8) == "-t -i\n")
    }

    @Test func aNonZeroExitIsAFailure() async throws {
        let (script, _) = try stub(exitCode: 75)
        await #expect(throws: MailError.self) {
            try await send(MailMessage(to: "a@b.co", subject: "Hello", text: "x"), through: script, from: "n@b.co")
        }
    }
}

struct MailQueueTests {
    @Test func aMessageQueuedWhenDeliveryFailsIsSentAfterARestart() async throws {
        let folder = temporaryFolder()
        let script = folder + "/sendmail", flag = folder + "/up", output = folder + "/received"
        // Fails until the flag file exists, like a relay that is down.
        try "#!/bin/sh\n[ -f \(flag) ] || exit 75\ncat > \(output)\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let config = #"{"mail":{"transport":"sendmail","sendmail":{"path":"\#(script)"},"retry_delay":60,"max_attempts":3}}"#
        let clock = ManualClock()
        let first = try await TestHarness.make(config: config, folder: folder + "/data", clock: clock)
        try first.kernel.mailer.register("test.code_mail", .code(subject: "Code {{code}}", lead: "Your code is", tail: "Thanks."))
        try await first.kernel.mailer.send(template: "test.code_mail", to: "a@b.co", values: ["lifetime": "5 minutes"], code: "135790")
        #expect(try await first.kernel.jobs.pending().count == 1)
        // The queue holds the message sealed, not the code.
        let journal = try FileManager.default.contentsOfDirectory(atPath: folder + "/data").filter { $0.hasPrefix("journal-") }
            .map { try String(contentsOfFile: folder + "/data/" + $0, encoding: .utf8) }.joined()
        #expect(journal.contains("mail.send") && !journal.contains("135790"))
        await first.server.close()

        _ = FileManager.default.createFile(atPath: flag, contents: Data())
        clock.advance(by: 60)
        let second = try await TestHarness.make(config: config, folder: folder + "/data", clock: clock)
        #expect(await second.kernel.jobs.runDue() == 1)
        #expect(try String(contentsOfFile: output, encoding: .utf8).contains("To: a@b.co"))
        await second.server.close()
    }

    @Test func permanentFailuresAreNotRetriedAndTransientOnesGiveUpAfterMaxAttempts() async throws {
        let h = try await TestHarness.make()
        let attempts = Counter()
        h.kernel.jobs.register(kind: "test.permanent") { _ in attempts.add(); throw JobQueue.PermanentFailure("nope") }
        h.kernel.jobs.register(kind: "test.transient", policy: .init(maxAttempts: 3, baseDelay: 10)) { _ in attempts.add(); throw MailError.transient("later") }
        try await h.kernel.jobs.enqueue(kind: "test.permanent", payload: [:])
        await h.kernel.jobs.runDue()
        #expect(try await h.kernel.jobs.pending().isEmpty && attempts.value == 1)

        try await h.kernel.jobs.enqueue(kind: "test.transient", payload: [:])
        await h.kernel.jobs.runDue()
        let retry = try #require(try await h.kernel.jobs.pending().first)
        #expect(retry.attempts == 1 && retry.runAfter == h.clock.now().addingTimeInterval(10))
        await h.kernel.jobs.runDue()
        #expect(attempts.value == 2)  // not due yet
        h.clock.advance(by: 10)
        await h.kernel.jobs.runDue()
        #expect(try await h.kernel.jobs.pending().first?.runAfter == h.clock.now().addingTimeInterval(20))
        h.clock.advance(by: 20)
        await h.kernel.jobs.runDue()
        #expect(try await h.kernel.jobs.pending().isEmpty && attempts.value == 4)
        #expect(h.logs.contains("failed for good"))
        await h.server.close()
    }

    @Test func smtpConfiguration() throws {
        func parse(_ smtp: String) throws -> AuthConfig {
            try AuthConfig.parse(Data(#"{"mail":{"transport":"smtp","smtp":\#(smtp)}}"#.utf8), host: "h", port: 1, availableProviders: [])
        }
        #expect(throws: ConfigError.self) { try parse("{}") }
        #expect(throws: ConfigError.self) { try parse(#"{"host":"smtp.example.com","security":"none"}"#) }
        #expect(throws: ConfigError.self) { try parse(#"{"host":"smtp.example.com","security":"ssl"}"#) }
        #expect(throws: ConfigError.self) { try parse(#"{"host":"smtp.example.com","username":"u"}"#) }
        #expect(throws: ConfigError.self) { try parse(#"{"host":"smtp.example.com","hots":"x"}"#) }
        #expect(try parse(#"{"host":"smtp.example.com"}"#).mail.smtp?.port == 587)
        #expect(try parse(#"{"host":"smtp.example.com","security":"tls"}"#).mail.smtp?.port == 465)
        #expect(try parse(#"{"host":"127.0.0.1","security":"none"}"#).mail.smtp?.port == 25)
        #expect(throws: ConfigError.self) {
            try AuthConfig.parse(Data(#"{"mail":{"from":"a@b.c\r\nBcc: x@y.z"}}"#.utf8), host: "h", port: 1, availableProviders: [])
        }
    }
}

final class Counter: Sendable {
    private let count = Synchronization.Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

import Synchronization

/// A provider's mail is its own: start-up stops when one words a mail under another's name.
struct MailTemplateOwnershipTests {
    struct Honest: AuthProvider {
        static let id = "honest"
        init(kernel: Kernel, config: inout ConfigSection) throws {
            try kernel.mailer.register("honest.code", .code(subject: "{{code}}", lead: "Code", tail: "Bye."))
        }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
    }
    /// Claims the honest provider's mail, as the password provider once claimed the email provider's.
    struct Rogue: AuthProvider {
        static let id = "rogue"
        init(kernel: Kernel, config: inout ConfigSection) throws {
            try kernel.mailer.register("honest.code", .code(subject: "{{code}}", lead: "Someone knows your password:", tail: "Bye."))
        }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
    }
    /// Registers a name of its own form that is not its own.
    struct Squatter: AuthProvider {
        static let id = "squatter"
        init(kernel: Kernel, config: inout ConfigSection) throws {
            try kernel.mailer.register("later.code", .code(subject: "{{code}}", lead: "Code", tail: "Bye."))
        }
        func routes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }
    }

    @Test func aSecondRegistrationOfANameStopsStartUp() async throws {
        let error = await #expect(throws: ConfigError.self) {
            _ = try await TestHarness.make(providers: [Honest.self, Rogue.self], config: #"{"providers":["honest","rogue"],"mail":{"transport":"outbox"}}"#)
        }
        #expect(error?.description.contains("\"honest.code\" is registered twice") == true)
    }

    @Test func aProviderNamesOnlyItsOwnTemplates() async throws {
        let error = await #expect(throws: ConfigError.self) {
            _ = try await TestHarness.make(providers: [Squatter.self], config: #"{"providers":["squatter"],"mail":{"transport":"outbox"}}"#)
        }
        #expect(error?.description.contains("\"squatter\" registered the mail template \"later.code\"") == true)
        let h = try await TestHarness.make(providers: [Honest.self], config: #"{"providers":["honest"],"mail":{"transport":"outbox"}}"#)
        #expect(h.kernel.mailer.templates.names.contains("honest.code"))
        await h.server.close()
    }
}

/// Contract §18: mail is written in its recipient's `locale`, else the request's language.
struct MailLanguageTests {
    @Test func aMailIsInTheRecipientsLocaleElseTheRequestsAndSaysWhichInItsHeader() async throws {
        let h = try await TestHarness.make(providers: [EmailProvider.self])
        let session = try await h.signIn("greta", email: "greta@example.com")
        let id = UUID(uuidString: session.user.id)!
        _ = try await h.kernel.users.update(id) { $0.locale = "de-AT" }
        let templates = h.kernel.mailer.templates
        let values = ["method": "PIN", "when": "now", "not_me": "https://example.com/not-me"]
        let german = templates.render("kernel.sign_in_method_added", to: "x@example.com", values: values, language: "de")
        let english = templates.render("kernel.sign_in_method_added", to: "x@example.com", values: values, language: "en")
        #expect(german.subject != english.subject && german.language == "de" && english.language == "en")
        #expect(templates.render("kernel.sign_in_method_added", to: "x", values: values, language: "de-CH").subject == german.subject)

        // The account's locale, whatever the request asked for; an address without an account: the request's.
        try await RequestLanguage.$current.withValue(RequestLanguage(fixed: "en")) {
            try await h.kernel.mailer.send(template: "kernel.sign_in_method_added", to: "greta@example.com", values: values)
        }
        try await RequestLanguage.$current.withValue(RequestLanguage(fixed: "de")) {
            try await h.kernel.mailer.send(template: "kernel.sign_in_method_added", to: "nobody@example.com", values: values)
        }
        try await h.kernel.mailer.send(template: "kernel.sign_in_method_added", to: "nobody-else@example.com", values: values)
        #expect(try h.mail(to: "greta@example.com").last?.subject == german.subject)
        #expect(try h.mail(to: "nobody@example.com").last?.subject == german.subject)
        #expect(try h.mail(to: "nobody-else@example.com").last?.subject == english.subject, "no locale, no request: English")

        let raw = try MailComposer.compose(german, from: "authd <no-reply@example.com>")
        #expect(raw.components(separatedBy: "\r\n").contains("Content-Language: de"))
        var unknown = german
        unknown.language = "not a tag"
        #expect(!(try MailComposer.compose(unknown, from: "authd <no-reply@example.com>")).contains("Content-Language"))
    }
}
