import Foundation
public import HTTPTypes
import NIOCore
import Synchronization

/// A browser of authd's pages for a provider's tests: it keeps cookies, sends the issuer's `Origin`
/// with each form, posts the CSRF token of the last page shown, and follows redirects on the
/// issuer (one to another site stops there: the page's `path` is where it was sent).
///
/// ```swift
/// let h = try await TestHarness.make(providers: [InviteCodeProvider.self], config: config)
/// try await h.test { client async throws in
///     let browser = HarnessBrowser(client, origin: h.kernel.issuer)
///     #expect(try await browser.open("/login").text.contains("Invite code"))
///     let signedIn = try await browser.submit("/login/invite/redeem", ["code": "ada-7d2f-93ac-41b8", "display_name": "Ada"])
///     #expect(signedIn.path == "/account" && signedIn.text.contains("Your account"))
/// }
/// ```
/// Pages are served over HTTPS or to loopback clients only, on the issuer's host: give the harness
/// `"issuer": "https://localhost"` (its client asks for `localhost`).
public final class HarnessBrowser: Sendable {
    private let client: HarnessClient
    private let origin: String
    private let language: String?
    private let state = Mutex<(cookies: [String: String], csrf: String?)>(([:], nil))

    /// A browser using `client`, its forms from `origin` (the issuer), asking for pages in
    /// `language` (its `Accept-Language`, e.g. `"de"`; nil sends none, and pages are in English).
    ///
    /// ```swift
    /// let german = HarnessBrowser(client, origin: h.kernel.issuer, language: "de")
    /// ```
    public init(_ client: HarnessClient, origin: String, language: String? = nil) {
        self.client = client
        self.origin = origin
        self.language = language
    }

    /// A page as shown: where the browser ended up, the status and the HTML.
    public struct Page: Sendable {
        /// The path (with its query) of the page finally shown, or the whole URL of another site a
        /// redirect sent the browser to.
        public let path: String
        /// Its status.
        public let status: HTTPResponse.Status
        /// Its HTML.
        public let text: String
    }

    /// GETs `path`, following redirects.
    public func open(_ path: String) async throws -> Page {
        try await follow(.get, path, body: nil)
    }

    /// Posts `fields` (and the last page's CSRF token) to `action`, as the form on that page would.
    public func submit(_ action: String, _ fields: [String: String]) async throws -> Page {
        var all = fields
        if all["csrf"] == nil, let csrf = state.withLock({ $0.csrf }) { all["csrf"] = csrf }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = all.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return try await follow(.post, action, body: body)
    }

    /// The value of a cookie the browser holds, nil when it holds none of that name.
    public func cookie(_ name: String) -> String? { state.withLock { $0.cookies[name] } }

    private func follow(_ method: HTTPRequest.Method, _ path: String, body: String?) async throws -> Page {
        var (method, path, body) = (method, path, body)
        for _ in 0..<10 {
            var headers = HTTPFields()
            let cookies = state.withLock { $0.cookies }
            if !cookies.isEmpty { headers[.cookie] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
            if let language { headers[.acceptLanguage] = language }
            if method == .post {
                headers[.origin] = origin
                headers[.contentType] = "application/x-www-form-urlencoded"
            }
            let response = try await client.execute(uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
            remember(response.headers[values: .setCookie])
            if [301, 302, 303, 307, 308].contains(response.status.code), let location = response.headers[.location] {
                if !location.hasPrefix("/") && !location.hasPrefix(origin + "/") {
                    return Page(path: location, status: response.status, text: "")  // another site: an identity provider's page
                }
                path = location.hasPrefix(origin) ? String(location.dropFirst(origin.count)) : location
                if response.status.code != 307 && response.status.code != 308 { (method, body) = (.get, nil) }
                continue
            }
            let text = String(buffer: response.body)
            if let range = text.range(of: #"name="csrf" value="([^"]+)""#, options: .regularExpression) {
                let match = text[range]
                let value = match.split(separator: "\"").dropFirst(3).first.map(String.init)
                state.withLock { $0.csrf = value }
            }
            return Page(path: path, status: response.status, text: text)
        }
        throw HarnessClientError("more than ten redirects")
    }

    private func remember(_ setCookies: [String]) {
        state.withLock { state in
            for line in setCookies {
                let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let pair = parts.first, let eq = pair.firstIndex(of: "=") else { continue }
                let name = String(pair[..<eq]), value = String(pair[pair.index(after: eq)...])
                let expired = parts.contains { $0.lowercased() == "max-age=0" } || value.isEmpty
                state.cookies[name] = expired ? nil : value
            }
        }
    }
}
