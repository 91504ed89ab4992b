import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes

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

    /// The claims of a client access token this server signed, still valid; nil otherwise.
    func verifiedAccessToken(_ token: String) -> [String: JSONValue]? {
        guard let claims = verified(token, typ: "at+jwt"), case .string? = claims["client_id"], case .number(let exp)? = claims["exp"],
            exp > clock.now().timeIntervalSince1970
        else { return nil }
        return claims
    }

    /// The claims of an ID token this server signed, expired or not (a logout's `id_token_hint`).
    func verifiedIDToken(_ token: String) -> [String: JSONValue]? {
        guard let claims = verified(token, typ: "JWT"), case .string? = claims["aud"], claims["client_id"] == nil else { return nil }
        return claims
    }

    /// The claims of a compact JWS of this `typ` that this issuer signed with one of its keys.
    private func verified(_ token: String, typ: String) -> [String: JSONValue]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 8192, parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: Data(headerBytes)),
            case .string(let alg)? = header["alg"], case .string(typ)? = header["typ"], case .string(let kid)? = header["kid"],
            verify(alg: alg, kid: kid, signature: signature, input: Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))),
            let claims = try? JSONDecoder().decode([String: JSONValue].self, from: Data(payloadBytes)),
            case .string(issuer.value)? = claims["iss"]
        else { return nil }
        return claims
    }

    /// The claims scopes grant about `user` (ID token and userinfo): `email` only when verified
    /// unless the client is registered `--unverified-email`, each omitted when null, and the
    /// `app_metadata` keys the client names as claims (with `openid`, always granted).
    static func userClaims(_ user: UserRecord, scopes: Set<String>, client: OpenIDClient) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["sub": .string(user.id.lowercased)]
        if scopes.contains("email"), let email = user.email, user.emailVerified || client.unverifiedEmail {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(user.emailVerified)
        }
        if scopes.contains("profile") {
            if let name = user.displayName { claims["name"] = .string(name) }
            if let username = user.username { claims["preferred_username"] = .string(username) }
        }
        for name in client.claims {
            if let value = user.appMetadata[name], value != .null { claims[name] = value }
        }
        return claims
    }
}
