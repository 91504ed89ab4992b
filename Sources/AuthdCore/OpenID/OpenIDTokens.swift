import AuthKernel
import AuthStorage
import Foundation

/// The tokens the OpenID Provider issues: ID tokens and client access tokens (RFC 9068), compact
/// JWS signed with the key ring's active Ed25519 key (`EdDSA`), verified against the same JWKS as
/// authd's own tokens. A client access token's `aud` is the client id and it carries `client_id`,
/// so authd's own API, which takes only its configured audience, never accepts one.
struct OpenIDTokens: Sendable {
    let keyRing: SigningKeyRing
    let issuer: IssuerName
    let clock: any AuthClock
    static let accessTTL = 3600
    static let idTokenTTL = 3600

    func sign(_ claims: [String: JSONValue], typ: String) -> String {
        let key = keyRing.active
        var header = JSONWriter(capacity: 96)
        header.value(.object(["alg": .string("EdDSA"), "kid": .string(key.kid), "typ": .string(typ)]))
        var payload = JSONWriter(capacity: 512)
        payload.value(.object(claims))
        let input = Base64URL.encode(header.bytes) + "." + Base64URL.encode(payload.bytes)
        return input + "." + Base64URL.encode(key.keyPair.sign(Array(input.utf8)))
    }

    /// The claims of a client access token this server signed, still valid; nil otherwise.
    func verifiedAccessToken(_ token: String) -> [String: JSONValue]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 4096, parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: Data(headerBytes)),
            case .string("EdDSA")? = header["alg"], case .string("at+jwt")? = header["typ"], case .string(let kid)? = header["kid"],
            let key = keyRing.verificationKey(kid: kid, now: clock.now()),
            Ed25519.verify(signature: signature, message: Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)), publicKey: key.keyPair.publicKey),
            let claims = try? JSONDecoder().decode([String: JSONValue].self, from: Data(payloadBytes)),
            case .string(issuer.value)? = claims["iss"], case .string? = claims["client_id"],
            case .number(let exp)? = claims["exp"], exp > clock.now().timeIntervalSince1970
        else { return nil }
        return claims
    }

    /// The claims scopes grant about `user` (ID token and userinfo).
    static func userClaims(_ user: UserRecord, scopes: Set<String>) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["sub": .string(user.id.lowercased)]
        if scopes.contains("email"), let email = user.email, user.emailVerified {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(true)
        }
        if scopes.contains("profile") {
            if let name = user.displayName { claims["name"] = .string(name) }
            if let username = user.username { claims["preferred_username"] = .string(username) }
        }
        return claims
    }
}
