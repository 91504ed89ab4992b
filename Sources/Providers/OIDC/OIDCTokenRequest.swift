import AuthKernel
import Foundation
import HTTPTypes

/// The web flow's token request (RFC 6749 §4.1.3 with PKCE): the code, authd's redirect URI and
/// the verifier for the upstream's token endpoint; the client authenticates with HTTP Basic when
/// the upstream takes it (the default of OpenID Connect), else in the body (GitHub).
struct OIDCTokenRequest {
    var url: String
    var clientID: String
    var clientSecret: String?
    var basicAuth: Bool
    var code: String
    var redirectURI: String
    var verifier: String

    /// What came back: the ID token (OpenID Providers) and the access token (GitHub's user API).
    struct Answer {
        var idToken: String?
        var accessToken: String?
    }

    /// Why the exchange failed: logged, never shown.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends it. - Throws: ``Refused`` when the upstream refuses the code; 503 when it cannot be reached.
    func send(_ http: any OutboundHTTP, upstream: String) async throws -> Answer {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
        var headers: HTTPFields = [.accept: "application/json", .contentType: "application/x-www-form-urlencoded", .userAgent: "authd"]
        switch (clientSecret, basicAuth) {
        case (let secret?, true):
            // RFC 6749 §2.3.1: each part form-encoded before Base64.
            let pair = FormEncoding.encode(clientID) + ":" + FormEncoding.encode(secret)
            headers[.authorization] = "Basic " + Data(pair.utf8).base64EncodedString()
        case (let secret?, false):
            fields += [("client_id", clientID), ("client_secret", secret)]
        case (nil, _):
            fields.append(("client_id", clientID))
        }
        let response: OutboundResponse
        do {
            response = try await http.send(
                OutboundRequest(method: .post, url: url, headers: headers, body: Array(FormEncoding.encode(fields).utf8), maxResponseBytes: 64 * 1024))
        } catch {
            throw OIDCDiscovery.unavailable(upstream)
        }
        guard let json = try? JSONDecoder().decode([String: JSONValue].self, from: Data(response.body)) else {
            throw Refused(description: "HTTP \(response.status.code), not JSON")
        }
        func string(_ key: String) -> String? { if case .string(let s)? = json[key], !s.isEmpty, s.utf8.count <= 16_384 { s } else { nil } }
        // GitHub answers a refused code with 200 and an `error`.
        guard response.status == .ok, json["error"] == nil else {
            throw Refused(description: "HTTP \(response.status.code): \(LogSafe.text(string("error") ?? "no error code", maxLength: 80))")
        }
        return Answer(idToken: string("id_token"), accessToken: string("access_token"))
    }
}

/// `application/x-www-form-urlencoded` (and a URL's query) as RFC 3986's unreserved characters
/// and percent-escapes of everything else.
enum FormEncoding {
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }

    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
