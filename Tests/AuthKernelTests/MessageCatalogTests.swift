@testable import AuthKernel
import Foundation
import HTTPTypes
import Testing

/// The message catalogs as a translator's tools write them (gettext PO), looked up as pages and mail do.
struct MessageCatalogTests {
    static let header = """
        msgid ""
        msgstr ""
        "Language: pl\\n"
        "Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\\n"

        """

    @Test func aPOFileReadsKeysEnglishTranslationsContinuationsAndPluralsAndSkipsFuzzyEntries() throws {
        let source = Self.header + """
            # A translator's comment.
            #: Sources/AuthdCore/Pages/Templates/login.mustache
            msgctxt "login.title"
            msgid "Sign in to {{app}}"
            msgstr "Zaloguj się do "
            "{{app}}"

            #, fuzzy
            msgctxt "login.stale"
            msgid "Old"
            msgstr "Stare"

            msgctxt "login.quote"
            msgid "Say \\"hi\\"\\nthen go"
            msgstr ""

            msgctxt "kernel.time.days_ago"
            msgid "{{count}} day ago"
            msgid_plural "{{count}} days ago"
            msgstr[0] "{{count}} dzień temu"
            msgstr[1] "{{count}} dni temu"
            msgstr[2] "{{count}} dni temu"
            """
        let file = try POFile(parsing: source, name: "pl.po")
        #expect(file.header["Language"] == "pl")
        #expect(file.entries.map(\.key) == ["login.title", "login.quote", "kernel.time.days_ago"], "the fuzzy entry is skipped")
        #expect(file.entries[0].forms == ["Zaloguj się do {{app}}"] && file.entries[0].english == "Sign in to {{app}}")
        #expect(file.entries[1].english == "Say \"hi\"\nthen go" && file.entries[1].forms == [""])
        #expect(file.entries[2].englishPlural == "{{count}} days ago" && file.entries[2].forms.count == 3)
    }

    @Test func aMalformedPOFileIsRefusedNamingTheLine() {
        let cases: [(String, String)] = [
            ("msgid \"x\"\nmsgstr \"y\"\n", "needs a key"),
            ("msgctxt \"a b\"\nmsgid \"x\"\nmsgstr \"\"\n", "needs a key"),
            ("msgctxt \"k\"\nmsgid \"x\"\nmsgstr \"bad \\q\"\n", "unknown escape"),
            ("msgctxt \"k\"\nmsgid \"x\"\nmsgstr unquoted\n", "double quotes"),
            ("msgctxt \"k\"\nmsgid \"x\"\nmsgid_plural \"xs\"\nmsgstr[1] \"y\"\n", "msgstr[0]"),
            ("msgctxt \"k\"\nmsgid \"x\"\nmsgstr[0] \"y\"\n", "without msgid_plural"),
            ("\n\nmsgctxt \"k\"\nmsgid \"x\"\nmsgstr \"\"\nmsgstr \"again\"\n", "po:6"),
            ("msgctxt \"k\"\nmsgid \"x\"\nmsgfoo \"y\"\n", "unknown keyword"),
            (String(repeating: "#", count: POFile.maxBytes + 1), "4 MiB"),
        ]
        for (source, says) in cases {
            let error = #expect(throws: ConfigError.self) { try POFile(parsing: source, name: "x.po") }
            #expect(error?.description.contains(says) == true, "\(source.prefix(60)) → \(error?.description ?? "")")
        }
    }

    @Test func pluralFormsFollowTheHeadersExpression() throws {
        let polish = try PluralRule(parsing: "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);", name: "pl")
        #expect([1, 2, 4, 5, 12, 22, 25, 0].map(polish.form) == [0, 1, 1, 2, 2, 1, 2, 2])
        let japanese = try PluralRule(parsing: "nplurals=1; plural=0;", name: "ja")
        #expect([0, 1, 7].map(japanese.form) == [0, 0, 0])
        let french = try PluralRule(parsing: "nplurals=2; plural=(n > 1);", name: "fr")
        #expect([0, 1, 2].map(french.form) == [0, 0, 1])
        // An expression naming a form beyond nplurals stays within the forms there are.
        #expect(try PluralRule(parsing: "nplurals=2; plural=n;", name: "x").form(9) == 1)
        for bad in ["plural=n;", "nplurals=2; plural=(n != 1;", "nplurals=2; plural=n != x;", "nplurals=9; plural=0;", "nplurals=2; plural=n 1;"] {
            #expect(throws: ConfigError.self, "\(bad)") { try PluralRule(parsing: bad, name: "x") }
        }
    }

    @Test func languageTagsAreCheckedPutInCanonicalCaseAndNegotiatedFromAcceptLanguage() {
        #expect(LanguageTag("DE-at")?.description == "de-AT" && LanguageTag("zh-hant-tw")?.description == "zh-Hant-TW")
        #expect(LanguageTag("sr-Latn-RS-u-nu-latn")?.fallbacks == ["sr-Latn-RS-u-nu-latn", "sr-Latn-RS-u-nu", "sr-Latn-RS", "sr-Latn", "sr"])
        for bad in ["", "x", "en_US", "de--DE", "de-", "toolongtag1", "de-DE-" + String(repeating: "a", count: 30), "d3", "<script>"] {
            #expect(LanguageTag(bad) == nil, "\(bad)")
        }
        #expect(LanguageTag.accepted("fr;q=0.5, de-CH, en;q=0.8, *;q=0.9, it;q=0").map(\.description) == ["de-CH", "en", "fr"])
        #expect(LanguageTag.accepted(nil).isEmpty && LanguageTag.accepted("q=1, ;;;").isEmpty)
        // Bounded: past the 16th range, or 1 KiB, nothing more is read.
        let many = (0..<40).map { "x\($0 % 10)y" }.joined(separator: ",") + ",de"
        #expect(!LanguageTag.accepted(many).contains(LanguageTag("de")!))
        let long = String(repeating: " ", count: 1100) + "de"
        #expect(LanguageTag.accepted(long).isEmpty)

        let messages = Messages(folder: nil)
        #expect(messages.negotiate("fr-FR, de-AT;q=0.9, en;q=0.1") == "de", "de-AT is served by de")
        #expect(messages.negotiate("fr-FR, en;q=0.1") == "en" && messages.negotiate("fr") == nil && messages.negotiate(nil) == nil)
    }

    @Test func aKeyFallsBackFromTheLanguageToItsShorterTagToEnglishAndAnOperatorCatalogReplacesOrAdds() throws {
        let folder = NSTemporaryDirectory() + "locales-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            msgid ""
            msgstr ""
            "Plural-Forms: nplurals=2; plural=(n > 1);\\n"

            msgctxt "kernel.time.yesterday"
            msgid "yesterday"
            msgstr "hier"

            msgctxt "kernel.time.minutes_ago"
            msgid "{{count}} minute ago"
            msgid_plural "{{count}} minutes ago"
            msgstr[0] "il y a {{count}} minute"
            msgstr[1] "il y a {{count}} minutes"
            """.write(toFile: folder + "/fr.po", atomically: true, encoding: .utf8)
        try "msgctxt \"kernel.time.just_now\"\nmsgid \"just now\"\nmsgstr \"soeben\"\n".write(toFile: folder + "/de.po", atomically: true, encoding: .utf8)
        let messages = Messages(folder: folder)
        try messages.loadOperatorCatalogs()
        #expect(messages.languages == ["en", "de", "fr"])
        #expect(messages.text("kernel.time.yesterday", language: "fr-CA") == "hier")
        #expect(messages.plural("kernel.time.minutes_ago", count: 0, language: "fr") == "il y a 0 minute", "French's own plural rule")
        #expect(messages.text("kernel.time.just_now", language: "fr") == "just now", "a key French lacks is English")
        #expect(messages.text("kernel.time.just_now", language: "de-AT") == "soeben", "the operator's entry replaces the shipped one")
        #expect(messages.text("kernel.time.yesterday", language: "de") == "gestern")
        #expect(messages.text("no.such.key") == "no.such.key")
        #expect(messages.lifetime(300, language: "de") == "5 Minuten" && messages.lifetime(3600) == "1 hour" && messages.lifetime(90) == "90 seconds")
        #expect(messages.number(12345, language: "de") == "12.345" && messages.number(12345) == "12,345")

        try "msgctxt \"k\"\nmsgid \"x\"\nmsgstr \"y\"\n".write(toFile: folder + "/not_a_tag.po", atomically: true, encoding: .utf8)
        #expect(throws: ConfigError.self) { try Messages(folder: folder).loadOperatorCatalogs() }
    }

    @Test func aProvidersCatalogNeedsEnglishItsOwnKeysAndNoOneElsesAndTemplatesGetTheirSentences() throws {
        let messages = Messages(folder: nil)
        let en = MessageCatalogDeclaration("en", source: "msgctxt \"sms.sent\"\nmsgid \"We texted {{phone}} a code.\"\nmsgstr \"\"\n")
        let de = MessageCatalogDeclaration("de", source: "msgctxt \"sms.sent\"\nmsgid \"We texted {{phone}} a code.\"\nmsgstr \"Wir haben {{phone}} einen Code geschickt.\"\n")
        #expect(throws: ConfigError.self) { try messages.register([de], owner: "sms", prefix: "sms.") }
        try messages.register([en, de], owner: "sms", prefix: "sms.")
        let twice = #expect(throws: ConfigError.self) { try messages.register([en], owner: "other", prefix: nil) }
        #expect(twice?.description.contains("both") == true)
        let outside = MessageCatalogDeclaration("en", source: "msgctxt \"kernel.time.yesterday\"\nmsgid \"x\"\nmsgstr \"\"\n")
        #expect(throws: ConfigError.self) { try messages.register([outside], owner: "sms", prefix: "sms.") }
        #expect(throws: ConfigError.self) { try messages.register([MessageCatalogDeclaration("e_n", source: "")], owner: "sms", prefix: "sms.") }

        let template = "<p>[[sms.sent]]</p> [[not a key]] [[kernel.time.yesterday]]"
        #expect(messages.localize(template: template, language: "de") == "<p>Wir haben {{phone}} einen Code geschickt.</p> [[not a key]] gestern")
        #expect(messages.text("sms.sent", ["phone": "+49 151"], language: "en") == "We texted +49 151 a code.")
        // A value holding placeholder syntax is not expanded.
        #expect(messages.text("sms.sent", ["phone": "{{phone}}"], language: "de") == "Wir haben {{phone}} einen Code geschickt.")
    }

    @Test func anErrorOnAPageIsItsOwnSentenceOrItsCodesInTheRequestsLanguage() {
        let messages = Messages(folder: nil)
        let limited = AuthError.rateLimited(retryAfter: 30)
        #expect(messages.sentence(limited) == "Too many requests. Try again later. (Try again in 30 s.)", "English keeps the message")
        RequestLanguage.$current.withValue(RequestLanguage(fixed: "de")) {
            #expect(messages.sentence(limited) == "Zu viele Versuche. (Bitte in 30 Sekunden erneut versuchen.)")
            #expect(messages.sentence(.invalidCode) == "Der Code ist falsch oder abgelaufen. Fordern Sie bei Bedarf einen neuen an.")
            let worded = AuthError.invalidRequest("Too short.").worded("kernel.time.on_day", ["day": "1. Mai"])
            #expect(messages.sentence(worded) == "am 1. Mai")
            #expect(worded == AuthError.invalidRequest("Too short."), "the wording is not part of the error's identity")
            // A code no catalog words keeps its message.
            #expect(messages.sentence(AuthError(status: .badRequest, code: "SOMETHING_NEW", message: "New.")) == "New.")
        }
    }
}
