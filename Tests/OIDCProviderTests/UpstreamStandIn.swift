import AuthKernel
import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Synchronization

/// An identity provider answering as `kernel.http` would reach it: its discovery document and key
/// set (counting fetches, down on demand), and ID tokens signed with each algorithm authd accepts.
final class UpstreamStandIn: OutboundHTTP, Sendable {
    static let issuer = "https://idp.example.test"
    struct State {
        var down = false
        var discoveryFetches = 0
        var jwksFetches = 0
        var published: Set<String> = ["rsa", "ec", "ed"]
        /// The discovery document says its answers carry `iss` (RFC 9207).
        var issParameter = false
        /// The discovery document names a token endpoint on authd's own loopback.
        var loopbackTokenEndpoint = false
        /// The ID token each code the web flow may bring is exchanged for.
        var codes: [String: String] = [:]
        /// The token requests received: their fields and `Authorization`.
        var tokenRequests: [(fields: [String: String], authorization: String?)] = []
        /// GitHub's user and emails (`/user`, `/user/emails`).
        var githubUser = #"{"id":4242,"login":"ada","name":"Ada Lovelace"}"#
        var githubEmails = #"[{"email":"ada@example.com","primary":true,"verified":true}]"#
    }
    static let github = "https://github.example.test"
    let state = Mutex(State())
    let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    let ec = P256.Signing.PrivateKey()
    let ed = Curve25519.Signing.PrivateKey()
    /// A key the set never publishes: tokens it signs name an unknown `kid`.
    let stranger = Curve25519.Signing.PrivateKey()

    func send(_ request: OutboundRequest) async throws -> OutboundResponse {
        let (down, published) = state.withLock { s -> (Bool, Set<String>) in
            if request.url.hasSuffix("/.well-known/openid-configuration") { s.discoveryFetches += 1 }
            if request.url.hasSuffix("/jwks") { s.jwksFetches += 1 }
            return (s.down, s.published)
        }
        if down { throw URLError(.cannotConnectToHost) }
        if request.url == Self.issuer + "/.well-known/openid-configuration" {
            let (iss, loopback) = state.withLock { ($0.issParameter, $0.loopbackTokenEndpoint) }
            let token = loopback ? "http://127.0.0.1:8080/token" : Self.issuer + "/token"
            return Self.json(
                #"{"issuer":"\#(Self.issuer)","jwks_uri":"\#(Self.issuer)/jwks","authorization_endpoint":"\#(Self.issuer)/authorize","token_endpoint":"\#(token)","authorization_response_iss_parameter_supported":\#(iss)}"#
            )
        }
        if request.method == .post, request.url == Self.issuer + "/token" || request.url == Self.github + "/login/oauth/access_token" {
            let fields = Dictionary(
                String(decoding: request.body, as: UTF8.self).split(separator: "&").map { pair -> (String, String) in
                    let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                    return (kv[0], kv.count > 1 ? kv[1] : "")
                }, uniquingKeysWith: { $1 })
            let token = state.withLock { s in
                s.tokenRequests.append((fields, request.headers[.authorization]))
                return s.codes.removeValue(forKey: fields["code"] ?? "")
            }
            if request.url.hasPrefix(Self.github) {
                // GitHub answers a bad code with 200 and an error.
                return Self.json(token == nil ? #"{"error":"bad_verification_code"}"# : #"{"access_token":"gho_\#(token!)","token_type":"bearer"}"#)
            }
            guard let token else { return OutboundResponse(status: .badRequest, body: Array(#"{"error":"invalid_grant"}"#.utf8)) }
            return Self.json(#"{"access_token":"at","token_type":"Bearer","id_token":"\#(token)"}"#)
        }
        if request.url.hasPrefix(Self.github + "/api/user") {
            guard request.headers[.authorization]?.hasPrefix("Bearer gho_") == true else { return OutboundResponse(status: .unauthorized) }
            let (user, emails) = state.withLock { ($0.githubUser, $0.githubEmails) }
            return Self.json(request.url.hasSuffix("/emails") ? emails : user)
        }
        if request.url == Self.issuer + "/jwks" { return Self.json(jwks(published)) }
        return OutboundResponse(status: .notFound)
    }

    static func json(_ text: String) -> OutboundResponse {
        OutboundResponse(status: .ok, headers: [.contentType: "application/json"], body: Array(text.utf8))
    }

    func jwks(_ published: Set<String>) -> String {
        var keys: [String] = []
        if published.contains("rsa"), let p = try? rsa.publicKey.getKeyPrimitives() {
            keys.append(#"{"kty":"RSA","kid":"rsa","use":"sig","n":"\#(Base64URL.encode(Array(p.modulus)))","e":"\#(Base64URL.encode(Array(p.publicExponent)))"}"#)
        }
        if published.contains("ec") {
            let raw = Array(ec.publicKey.rawRepresentation)
            keys.append(#"{"kty":"EC","kid":"ec","crv":"P-256","x":"\#(Base64URL.encode(Array(raw[0..<32])))","y":"\#(Base64URL.encode(Array(raw[32..<64])))"}"#)
        }
        if published.contains("ed") {
            keys.append(#"{"kty":"OKP","kid":"ed","crv":"Ed25519","x":"\#(Base64URL.encode(Array(ed.publicKey.rawRepresentation)))"}"#)
        }
        return #"{"keys":[\#(keys.joined(separator: ","))]}"#
    }

    /// An ID token with `claims` over the defaults (this issuer, the client id `authd`, a minute to
    /// live, subject `u-1`), signed with `alg` by `kid`'s key.
    func token(alg: String = "RS256", kid: String? = nil, typ: String = "JWT", now: Date, _ claims: [String: Any] = [:]) throws -> String {
        var all: [String: Any] = [
            "iss": Self.issuer, "aud": "authd", "sub": "u-1", "iat": Int(now.timeIntervalSince1970), "exp": Int(now.timeIntervalSince1970) + 60,
            "jti": UUID().uuidString,
        ]
        for (k, v) in claims { all[k] = v }
        all = all.filter { !($0.value is NSNull) }
        let keyID = kid ?? ["RS256": "rsa", "PS256": "rsa", "ES256": "ec", "EdDSA": "ed", "Ed25519": "ed"][alg] ?? "rsa"
        let header = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: ["alg": alg, "kid": keyID, "typ": typ])))
        let payload = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: all)))
        let input = Data((header + "." + payload).utf8)
        let signature: [UInt8]
        switch alg {
        case "RS256": signature = Array(try rsa.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation)
        case "PS256": signature = Array(try rsa.signature(for: input, padding: .PSS).rawRepresentation)
        case "ES256": signature = Array(try ec.signature(for: input).rawRepresentation)
        case "EdDSA", "Ed25519": signature = Array(try (keyID == "stranger" ? stranger : ed).signature(for: input))
        case "HS256": signature = Array(HMAC<Crypto.SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Array("authd".utf8))))
        default: signature = []
        }
        return header + "." + payload + "." + Base64URL.encode(signature)
    }
}
