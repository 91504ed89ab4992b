import AuthKernel
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import Synchronization

/// Renders authd's pages: the layout around a step, from Mustache templates embedded in the binary
/// (the server's own and those the providers declare). Values are HTML-escaped by Mustache; a
/// step's own rendering goes into the layout as it is.
///
/// A template's sentences are `[[key]]`s of the message catalogs: each language gets its own
/// library of templates with the sentences put in once, at start-up, and a page is rendered from
/// the library of the request's language (``Messages/language``).
struct PageRenderer: Sendable {
    let libraries: [String: MustacheLibrary]
    let productName: String
    let messages: Messages

    /// The library of the task's language.
    var library: MustacheLibrary { libraries[Messages.language ?? "en"] ?? libraries["en"]! }
    /// The task's language, for cache keys and `<html lang>`.
    var language: String { Messages.language.flatMap { libraries[$0] == nil ? nil : $0 } ?? "en" }

    static let coreTemplates: [String: [UInt8]] = [
        "layout": PackageResources.layout_mustache, "login": PackageResources.login_mustache, "factor": PackageResources.factor_mustache,
        "account": PackageResources.account_mustache, "message": PackageResources.message_mustache, "not-me": PackageResources.not_me_mustache,
        "consent": PackageResources.consent_mustache, "logout": PackageResources.logout_mustache,
        "invitation": PackageResources.invitation_mustache,
        "device": PackageResources.device_mustache, "admin-nav": PackageResources.admin_nav_mustache,
        "admin-overview": PackageResources.admin_overview_mustache, "admin-users": PackageResources.admin_users_mustache,
        "admin-user": PackageResources.admin_user_mustache, "admin-factor": PackageResources.admin_factor_mustache,
        "admin-reauth": PackageResources.admin_reauth_mustache, "admin-setup": PackageResources.admin_setup_mustache,
        "admin-clients": PackageResources.admin_clients_mustache, "admin-client": PackageResources.admin_client_mustache,
        "admin-keys": PackageResources.admin_keys_mustache, "admin-webhooks": PackageResources.admin_webhooks_mustache,
        "admin-audit": PackageResources.admin_audit_mustache, "admin-config": PackageResources.admin_config_mustache,
    ]

    /// - Throws: ``ConfigError`` for a template that does not parse, or a provider's outside its id.
    init(providers: [any PageSignIn], productName: String, messages: Messages = Messages(folder: nil)) throws(ConfigError) {
        var sources: [String: String] = [:]
        for (name, bytes) in Self.coreTemplates { sources[name] = String(decoding: bytes, as: UTF8.self) }
        for provider in providers {
            let id = type(of: provider).id
            for declared in type(of: provider).pageTemplates {
                guard declared.name.hasPrefix(id + "."), sources[declared.name] == nil else {
                    throw ConfigError("provider \"\(id)\" declares the page template \"\(declared.name)\"; its templates are named \"\(id).NAME\", once each")
                }
                sources[declared.name] = declared.source
            }
        }
        var libraries: [String: MustacheLibrary] = [:]
        for language in messages.languages {
            var templates: [String: MustacheTemplate] = [:]
            for (name, source) in sources {
                do {
                    templates[name] = try MustacheTemplate(string: messages.localize(template: source, language: language))
                } catch {
                    throw ConfigError("the page template \"\(name)\" does not parse in \(language): \(error)")
                }
            }
            templates["escaped"] = try? MustacheTemplate(string: "{{value}}")
            libraries[language] = MustacheLibrary(templates: templates)
        }
        self.libraries = libraries
        self.productName = productName
        self.messages = messages
    }

    /// Renderings whose only per-request values are marks filled in afterwards (the CSRF token;
    /// the layout's title, error and content): Mustache's lookups cost more than the rest of a page.
    /// A rendering is kept cut at its marks, so filling it in is one concatenation. Bounded: once
    /// full, further renderings are made each time.
    final class Renderings: Sendable {
        /// A rendering cut at its marks: literal text, and slots named by the letter after the mark.
        enum Part: Sendable {
            case text(String)
            case slot(UInt8)
        }

        let entries = Mutex<[String: [Part]]>([:])
        static let limit = 1024
        /// Random per process, so no text a person types can be taken for one.
        let mark = "m" + Hex.encode(SecureRandom.bytes(8))

        /// The rendering of `key`, made by `make` (given the mark to write before each slot's letter).
        func parts(_ key: String, _ make: (String) -> String) -> [Part] {
            if let hit = entries.withLock({ $0[key] }) { return hit }
            let made = cut(make(mark))
            entries.withLock { if $0.count < Self.limit { $0[key] = made } }
            return made
        }

        func cut(_ rendered: String) -> [Part] {
            let bytes = Array(rendered.utf8), m = Array(mark.utf8)
            var parts: [Part] = [], start = 0, i = 0
            while i + m.count < bytes.count {
                if bytes[i] == m[0], bytes[i..<(i + m.count)].elementsEqual(m) {
                    parts.append(.text(String(decoding: bytes[start..<i], as: UTF8.self)))
                    parts.append(.slot(bytes[i + m.count]))
                    i += m.count + 1
                    start = i
                } else {
                    i += 1
                }
            }
            parts.append(.text(String(decoding: bytes[start...], as: UTF8.self)))
            return parts
        }

        static func fill(_ parts: [Part], _ values: [UInt8: String]) -> String {
            var out = ""
            out.reserveCapacity(parts.reduce(0) { if case .text(let t) = $1 { $0 + t.utf8.count } else { $0 + 64 } })
            for part in parts {
                switch part {
                case .text(let t): out += t
                case .slot(let letter): out += values[letter] ?? ""
                }
            }
            return out
        }
    }
    let renderings = Renderings()

    /// One template with `values` (already Mustache values).
    func render(_ template: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: template) ?? ""
    }

    /// A provider's step, with the form fields every step gets. A step without an error is rendered
    /// once with a mark for the CSRF token (a base64url value, the same escaped or not).
    func render(_ step: PageStep, csrf: String, action: String) -> String {
        func made(_ token: String) -> String {
            var values = step.values.mapValues(\.mustache)
            values["csrf"] = token
            values["action"] = action
            return render(step.template, values)
        }
        guard step.error == nil else { return made(csrf) }
        var key = "step\u{0}\(language)\u{0}\(action)\u{0}\(step.template)\u{0}"
        PageValue.appendKey(step.values, to: &key)
        return Renderings.fill(renderings.parts(key) { made($0 + "c") }, [UInt8(ascii: "c"): csrf])
    }

    /// `/login`'s first screen: the address form, then each provider's first step in its section;
    /// kept cut at the CSRF token's mark when nothing on it is the person's own (no step carries an
    /// error, no address typed) and it shows no logo (a `data:` logo is up to 64 KiB).
    func loginContent(_ form: LoginForm, _ steps: [(label: String, step: PageStep, action: String)], csrf: String) -> String {
        func made(_ token: String) -> String {
            let sections: [[String: Any]] = steps.map { ["label": $0.label, "html": render($0.step, csrf: token, action: $0.action)] }
            var values = form.values(csrf: token)
            values["sections"] = sections
            values["nothing"] = sections.isEmpty && form.buttons.isEmpty
            return render("login", values)
        }
        guard steps.allSatisfy({ $0.step.error == nil }), form.email.isEmpty, form.appLogo == nil else { return made(csrf) }
        var key = "login\u{0}\(language)\u{0}\(form.focusEmail)"
        for button in form.buttons {
            key += "\u{0}b\(button.label.utf8.count):\(button.label)\(button.action.utf8.count):\(button.action)\(button.takesPassword)"
        }
        for (label, step, action) in steps {
            key += "\u{0}s\(label.utf8.count):\(label)\(action.utf8.count):\(action)\(step.template.utf8.count):\(step.template)"
            PageValue.appendKey(step.values, to: &key)
        }
        return Renderings.fill(renderings.parts(key) { made($0 + "c") }, [UInt8(ascii: "c"): csrf])
    }

    /// `text` escaped as Mustache escapes a value.
    func escaped(_ text: String) -> String { render("escaped", ["value": text]) }

    /// A whole page: `content` (rendered) in the layout, with the pages' headers.
    func page(
        title: String, content: String, error: String? = nil, status: HTTPResponse.Status = .ok, signedIn: Bool = false, csrf: String = "",
        cookies: [Cookie] = [], formTarget: String? = nil, wide: Bool = false, imageSource: String? = nil, notice: String? = nil
    ) -> Response {
        // The layout once per shape, cut at its marks; the values go into the slots as they are.
        let layout = renderings.parts("layout\u{0}\(language)\u{0}\(signedIn)\u{0}\(error != nil)\u{0}\(wide)\u{0}\(notice != nil)") { mark in
            var values: [String: Any] = [
                "title": mark + "t", "product": productName, "lang": language, "content": mark + "b", "signed_in": signedIn, "csrf": mark + "c", "wide": wide,
            ]
            if error != nil { values["error"] = mark + "e" }
            if notice != nil { values["notice"] = mark + "n" }
            return render("layout", values)
        }
        var slots: [UInt8: String] = [UInt8(ascii: "t"): escaped(title), UInt8(ascii: "c"): csrf, UInt8(ascii: "b"): content]
        if let error { slots[UInt8(ascii: "e")] = escaped(error) }
        if let notice { slots[UInt8(ascii: "n")] = escaped(notice) }
        let html = Renderings.fill(layout, slots)
        var response = Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
        for cookie in cookies { response.setCookie(cookie) }
        PageGate.secure(&response, formTarget: formTarget, imageSource: imageSource)
        return response
    }

    /// The stylesheet.
    static let stylesheet = PackageResources.authd_css
    /// The pages' one script: a passkey's WebAuthn ceremony.
    static let passkeyScript = PackageResources.passkey_js
    /// The pages' other script: a waiting step asks whether it may go on (`/assets/poll.js`).
    static let pollScript = PackageResources.poll_js
}
