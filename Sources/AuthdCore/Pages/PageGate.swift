import AuthKernel
import Foundation
import HTTPTypes
import Hummingbird

/// The rules every page of authd's obeys (contract §13): served over HTTPS or to this machine only,
/// on the issuer's own host, every POST from the issuer's origin, headers that keep it out of
/// frames and away from other sites' scripts, and `return_to` paths that stay on the issuer.
struct PageGate: Sendable {
    let issuer: IssuerName

    /// `Content-Security-Policy` of every page: nothing from another site, no inline script, no
    /// frames; forms post to authd only, and (browsers check `form-action` along a form's
    /// redirects) to the one app address a sign-in or consent is sent back to.
    /// `imageSource`: the one other origin an image may come from (an app's `https` logo on `/login`).
    static func contentSecurityPolicy(formTarget: String? = nil, imageSource: String? = nil) -> String {
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:\(imageSource.map { " " + $0 } ?? ""); form-action 'self'\(formTarget.map { " " + $0 } ?? ""); "
            + "frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    }

    /// A redirect URI as a CSP source: its origin (`https://app.example`), or a native app's scheme
    /// (`com.example.app:`); nil when it is neither.
    static func formSource(_ uri: String) -> String? {
        guard let c = URLComponents(string: uri), let scheme = c.scheme?.lowercased() else { return nil }
        guard scheme == "http" || scheme == "https" else {
            return scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "+" || $0 == "-" }) ? scheme + ":" : nil
        }
        guard let host = c.host, !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]".contains($0) }) else { return nil }
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return scheme + "://" + shown + (c.port.map { ":\($0)" } ?? "")
    }

    /// The CSP source an app's logo needs: its origin for an `https` one; nil for a `data:` one,
    /// which `img-src` allows already.
    static func imageSource(_ logoURI: String) -> String? {
        logoURI.lowercased().hasPrefix("https://") ? formSource(logoURI) : nil
    }

    /// Over HTTPS (the issuer says clients reach authd by https) or from this machine.
    func isAllowed(_ context: AuthRequestContext) -> Bool {
        issuer.value.hasPrefix("https://") || Self.isLoopback(context.clientIP)
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// `scheme://host[:port]` of the issuer.
    var origin: String { Self.origin(issuer.value) }

    /// `scheme://host[:port]` of a URL.
    static func origin(_ url: String) -> String {
        guard let c = URLComponents(string: url), let scheme = c.scheme, let host = c.host else { return url }
        return "\(scheme)://\(host)\(c.port.map { ":\($0)" } ?? "")"
    }

    /// A redirect to the same path on the issuer's host, when the request named another (cookies
    /// belong to one host; a page reached as `localhost` must not sign in `127.0.0.1`).
    func redirectToIssuerHost(_ request: Request) -> Response? {
        guard let authority = request.head.authority, let c = URLComponents(string: issuer.value), let host = c.host else { return nil }
        let expected = host + (c.port.map { ":\($0)" } ?? "")
        let asked = authority.lowercased()
        guard asked != expected.lowercased(), asked != "[\(expected.lowercased())]" else { return nil }
        return Self.redirect(to: origin + request.uri.description, status: .temporaryRedirect)
    }

    /// Whether a POST came from the issuer's pages.
    func isSameOrigin(_ request: Request) -> Bool {
        request.headers[.origin] == origin
    }

    /// `return_to` as asked when it stays on the issuer: one `/`, then neither `/` nor `\` (nor
    /// their encodings), no control characters, and short enough that the sealed pre-sign-in cookie
    /// holds it beside a provider's pending state; otherwise `/` (contract §13), which is the account page
    /// (as is no `return_to` at all).
    static func returnTo(_ raw: String?) -> String {
        guard let raw else { return "/account" }
        guard raw.utf8.count <= 1536, raw.hasPrefix("/") else { return "/" }
        let second = raw.dropFirst().prefix(3).lowercased()
        if second.hasPrefix("/") || second.hasPrefix("\\") || second.hasPrefix("%2f") || second.hasPrefix("%5c") { return "/" }
        if raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) { return "/" }
        if raw.contains("\\") { return "/" }
        return raw
    }

    /// The headers of every page.
    static func secure(_ response: inout Response, formTarget: String? = nil, imageSource: String? = nil) {
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy(formTarget: formTarget, imageSource: imageSource)
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on a form POST.
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[.cacheControl] = "no-store"
    }

    /// A 303 (after a POST) or another redirect to `location`, with the pages' headers.
    static func redirect(to location: String, status: HTTPResponse.Status = .seeOther) -> Response {
        var response = Response(status: status, headers: [.location: location])
        secure(&response)
        return response
    }

    /// What a request from elsewhere than HTTPS or this machine gets.
    static func refusal() -> Response {
        var response = Response(
            status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: "authd's pages are served over HTTPS only (set an https issuer behind a TLS proxy, or http.tls).\n")))
        secure(&response)
        return response
    }
}
