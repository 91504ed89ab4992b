import AuthKernel
import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// Renders authd's pages: the layout around a step, from Mustache templates embedded in the binary
/// (the server's own and those the providers declare). Values are HTML-escaped by Mustache; a
/// step's own rendering goes into the layout as it is.
struct PageRenderer: Sendable {
    let library: MustacheLibrary
    let productName: String

    static let coreTemplates: [String: [UInt8]] = [
        "layout": PackageResources.layout_mustache, "login": PackageResources.login_mustache, "factor": PackageResources.factor_mustache,
        "account": PackageResources.account_mustache, "message": PackageResources.message_mustache, "not-me": PackageResources.not_me_mustache,
        "consent": PackageResources.consent_mustache, "logout": PackageResources.logout_mustache,
        "device": PackageResources.device_mustache,
    ]

    /// - Throws: ``ConfigError`` for a template that does not parse, or a provider's outside its id.
    init(providers: [any PageSignIn], productName: String) throws(ConfigError) {
        var templates: [String: MustacheTemplate] = [:]
        do {
            for (name, bytes) in Self.coreTemplates { templates[name] = try MustacheTemplate(string: String(decoding: bytes, as: UTF8.self)) }
            for provider in providers {
                let id = type(of: provider).id
                for declared in type(of: provider).pageTemplates {
                    guard declared.name.hasPrefix(id + "."), templates[declared.name] == nil else {
                        throw ConfigError("provider \"\(id)\" declares the page template \"\(declared.name)\"; its templates are named \"\(id).NAME\", once each")
                    }
                    templates[declared.name] = try MustacheTemplate(string: declared.source)
                }
            }
        } catch let error as ConfigError {
            throw error
        } catch {
            throw ConfigError("a page template does not parse: \(error)")
        }
        library = MustacheLibrary(templates: templates)
        self.productName = productName
    }

    /// One template with `values` (already Mustache values).
    func render(_ template: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: template) ?? ""
    }

    /// A provider's step, with the form fields every step gets.
    func render(_ step: PageStep, csrf: String, action: String) -> String {
        var values = step.values.mapValues(\.mustache)
        values["csrf"] = csrf
        values["action"] = action
        return render(step.template, values)
    }

    /// A whole page: `content` (rendered) in the layout, with the pages' headers.
    func page(
        title: String, content: String, error: String? = nil, status: HTTPResponse.Status = .ok, signedIn: Bool = false, csrf: String = "",
        cookies: [Cookie] = [], formTarget: String? = nil
    ) -> Response {
        var values: [String: Any] = ["title": title, "product": productName, "content": content, "signed_in": signedIn, "csrf": csrf]
        if let error { values["error"] = error }
        let html = render("layout", values)
        var response = Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
        for cookie in cookies { response.setCookie(cookie) }
        PageGate.secure(&response, formTarget: formTarget)
        return response
    }

    /// The stylesheet.
    static let stylesheet = PackageResources.authd_css
    /// The pages' one script: a passkey's WebAuthn ceremony.
    static let passkeyScript = PackageResources.passkey_js
}
