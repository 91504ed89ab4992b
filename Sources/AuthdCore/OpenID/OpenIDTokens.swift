import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Synchronization

/// The tokens the OpenID Provider issues: ID tokens and client access tokens (RFC 9068), compact
/// JWS signed with the client's algorithm: RS256 (the RSA key), or EdDSA / `Ed25519` (the key
/// ring's Ed25519 key, under its kid or `KID-ed25519`), all in the JWKS. A client access token's
/// `aud` is the client id and it carries `client_id`, so authd's own API, which takes only its
/// configured audience, never accepts one.
struct OpenIDTokens: Sendable {
    let keyRing: SigningKeyRing
    let rsa: (any RSASigning)?
    let issuer: IssuerName
    let clock: any AuthClock
    static let accessTTL = 3600
    static let idTokenTTL = 3600
    /// The kid suffix of the JWKS entry that names an Ed25519 key by RFC 9864's `Ed25519`.
    static let ed25519Suffix = "-ed25519"

    /// The algorithms this server signs with.
    var algorithms: [String] { (rsa == nil ? [] : ["RS256"]) + ["EdDSA", "Ed25519"] }

    func sign(_ claims: [String: JSONValue], typ: String, alg: String) throws -> String {
        let ed = keyRing.active
        let kid: String
        switch alg {
        case "RS256":
            guard let rsa else { throw OAuthError("server_error", "This server has no RSA key: register the client with --id-token-alg EdDSA.", status: .internalServerError) }
            kid = rsa.kid
        case "Ed25519": kid = ed.kid + Self.ed25519Suffix
        default: kid = ed.kid
        }
        var header = JSONWriter(capacity: 96)
        header.value(.object(["alg": .string(alg), "kid": .string(kid), "typ": .string(typ)]))
        var payload = JSONWriter(capacity: 512)
        payload.value(.object(claims))
        let input = Base64URL.encode(header.bytes) + "." + Base64URL.encode(payload.bytes)
        let signature = alg == "RS256" ? try rsa!.sign(Array(input.utf8), kid: kid) : ed.keyPair.sign(Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    /// Whether `signature` over `input` is right for the header's `alg` and `kid`.
    func verify(alg: String, kid: String, signature: [UInt8], input: [UInt8]) -> Bool {
        switch alg {
        case "RS256":
            return rsa?.verify(kid: kid, signature, input) ?? false
        case "EdDSA", "Ed25519":
            let edKid = alg == "Ed25519" && kid.hasSuffix(Self.ed25519Suffix) ? String(kid.dropLast(Self.ed25519Suffix.count)) : kid
            guard let key = keyRing.verificationKey(kid: edKid, now: clock.now()) else { return false }
            return Ed25519.verify(signature: signature, message: input, publicKey: key.keyPair.publicKey)
        default:
            return false
        }
    }

    /// What a client access token says (RFC 9068), as this server writes it.
    struct AccessClaims: Decodable, Sendable {
        var iss: String
        var sub: String
        var aud: String
        var clientID: String
        var scope: String
        var sid: String
        var exp: Double
        var iat: Double
        var authTime: Double?
        enum CodingKeys: String, CodingKey { case iss, sub, aud, clientID = "client_id", scope, sid, exp, iat, authTime = "auth_time" }
    }

    struct Header: Decodable {
        var alg: String
        var kid: String
        var typ: String
    }

    /// A compact JWS cut at its two dots, split on the bytes (the one path every userinfo call takes).
    static func parts(_ token: String) -> (header: [UInt8], payload: [UInt8], signature: [UInt8], input: [UInt8])? {
        let u = token.utf8
        guard u.count <= 8192, let d1 = u.firstIndex(of: 0x2E) else { return nil }
        let afterFirst = u.index(after: d1)
        guard let d2 = u[afterFirst...].firstIndex(of: 0x2E) else { return nil }
        let afterSecond = u.index(after: d2)
        guard !u[afterSecond...].contains(0x2E), let header = Base64URL.decode(token[..<d1]), let payload = Base64URL.decode(token[afterFirst..<d2]),
            let signature = Base64URL.decode(token[afterSecond...])
        else { return nil }
        return (header, payload, signature, Array(u[..<d2]))
    }

    /// Access tokens whose signature was checked, by their text, until they expire: a client calls
    /// userinfo with the same token many times, and the RSA check and JSON decoding were most of that
    /// call. Only the signature's verdict is kept; the session, the client and the user are looked
    /// up on every use. Bounded: when full it starts again.
    final class VerifiedTokens: Sendable {
        let entries = Mutex<[String: AccessClaims]>([:])
        static let limit = 4096

        func claims(_ token: String, now: Double) -> AccessClaims? {
            entries.withLock { $0[token] }.flatMap { $0.exp > now ? $0 : nil }
        }

        func keep(_ token: String, _ claims: AccessClaims) {
            entries.withLock { entries in
                if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
                entries[token] = claims
            }
        }
    }
    let verifiedTokens = VerifiedTokens()

    /// The claims of a client access token this server signed, still valid; nil otherwise.
    func verifiedAccessToken(_ token: String) -> AccessClaims? {
        let now = clock.now().timeIntervalSince1970
        if let known = verifiedTokens.claims(token, now: now) { return known }
        guard let claims = checkedAccessToken(token), claims.exp > now else { return nil }
        verifiedTokens.keep(token, claims)
        return claims
    }

    private func checkedAccessToken(_ token: String) -> AccessClaims? {
        let decoder = JSONDecoder()
        guard let parts = Self.parts(token), let header = try? decoder.decode(Header.self, from: Data(parts.header)), header.typ == "at+jwt",
            verify(alg: header.alg, kid: header.kid, signature: parts.signature, input: parts.input),
            let claims = try? decoder.decode(AccessClaims.self, from: Data(parts.payload)), claims.iss == issuer.value
        else { return nil }
        return claims
    }

    /// The claims of an ID token this server signed, expired or not (a logout's `id_token_hint`).
    func verifiedIDToken(_ token: String) -> [String: JSONValue]? {
        let decoder = JSONDecoder()
        guard let parts = Self.parts(token), let header = try? decoder.decode(Header.self, from: Data(parts.header)), header.typ == "JWT",
            verify(alg: header.alg, kid: header.kid, signature: parts.signature, input: parts.input),
            let claims = try? decoder.decode([String: JSONValue].self, from: Data(parts.payload)), case .string(issuer.value)? = claims["iss"],
            case .string? = claims["aud"], claims["client_id"] == nil
        else { return nil }
        return claims
    }

    /// The claims scopes grant about `user` (ID token and userinfo): `email` only when verified
    /// unless the client is registered `--unverified-email`, each omitted when null (scope `profile`:
    /// `name`, `preferred_username`, `locale`); `groups` (the
    /// user's own field, `[]` when none) for scope `groups` or a client registered `--claims groups`;
    /// and the other `app_metadata` keys the client names as claims (with `openid`, always granted).
    static func userClaims(_ user: UserRecord, scopes: Set<String>, client: OpenIDClient) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["sub": .string(user.id.lowercased)]
        if scopes.contains("email"), let email = user.email, user.emailVerified || client.unverifiedEmail {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(user.emailVerified)
        }
        if scopes.contains("profile") {
            if let name = user.displayName { claims["name"] = .string(name) }
            if let username = user.username { claims["preferred_username"] = .string(username) }
            if let locale = user.locale { claims["locale"] = .string(locale) }
        }
        if scopes.contains("groups") || client.claims.contains("groups") { claims["groups"] = .array(user.groups.map { .string($0) }) }
        for name in client.claims where name != "groups" {
            if let value = user.appMetadata[name], value != .null { claims[name] = value }
        }
        return claims
    }
}
