import AuthKernel
import Foundation
import JWTKit

/// Checks an upstream's ID tokens (contract §16): the algorithm (RS256, PS256, ES256, EdDSA or
/// Ed25519, with the key of the type it names; never `none` or HS*), the signature by the key its
/// `kid` names, then `iss`, `aud`, `exp`, `iat` with the skew, the subject and the nonce.
actor OIDCTokenVerifier {
    let upstream: OIDCUpstream
    let discovery: OIDCDiscovery
    let clockSkew: TimeInterval
    private var cached: (generation: Int, keys: OIDCKeys)?

    init(upstream: OIDCUpstream, discovery: OIDCDiscovery, clockSkew: Int) {
        self.upstream = upstream
        self.discovery = discovery
        self.clockSkew = TimeInterval(clockSkew)
    }

    /// Why a token was refused: logged, never shown (the client sees `INVALID_ID_TOKEN`).
    enum Rejection: Error, Equatable, CustomStringConvertible {
        case malformed, accessToken, algorithm(String), missingKid, unknownKid, keyType, signature, issuer, audience, expired, issuedInFuture, subject
        case nonceMissing, nonceMismatch, unexpectedNonce

        var description: String {
            switch self {
            case .malformed: "not a JWT"
            case .accessToken: "an access token (typ at+jwt), not an ID token"
            case .algorithm(let alg): "algorithm \(LogSafe.text(alg, maxLength: 40)) is not accepted"
            case .missingKid: "no kid in the header"
            case .unknownKid: "kid not in the upstream's keys"
            case .keyType: "the key's type is not the algorithm's"
            case .signature: "bad signature"
            case .issuer: "issuer not accepted"
            case .audience: "audience not accepted"
            case .expired: "expired"
            case .issuedInFuture: "issued in the future"
            case .subject: "no subject, or an overlong one"
            case .nonceMissing: "the token has a nonce but the request has none"
            case .nonceMismatch: "nonce does not match"
            case .unexpectedNonce: "the request needs a nonce in the token"
            }
        }
    }

    /// What a verified token says, as authd uses it.
    struct Identity: Sendable {
        var subject: String
        var email: String?
        var emailVerified: Bool
        var name: String?
        var expiresAt: Date
        /// The token's `iss` (GitHub: none).
        var issuer: String? = nil
    }

    static let algorithms: [String: String] = ["RS256": "RSA", "PS256": "RSA", "ES256": "EC P-256", "EdDSA": "OKP Ed25519", "Ed25519": "OKP Ed25519"]

    private struct Header: Decodable {
        var alg: String
        var kid: String?
        var typ: String?
    }

    /// The claims as sent, for JWTKit's verification (which checks the signature only: authd checks the claims).
    private struct RawClaims: JWTPayload {
        var values: [String: JSONValue]
        init(from decoder: any Decoder) throws { values = try [String: JSONValue](from: decoder) }
        func encode(to encoder: any Encoder) throws { try values.encode(to: encoder) }
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Verifies `token`; `nonce` is what the app chose (nil when it sent none). `web`: the token came
    /// from authd's own code flow, so its audience is authd's client id and its nonce is the one
    /// authd sent, as it was sent.
    /// - Throws: ``Rejection``; 503 `UNAVAILABLE` (an `AuthError`) while the upstream's keys cannot be had.
    func verify(_ token: String, nonce: String?, now: Date, web: Bool = false) async throws -> Identity {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count < 16_384, parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes))
        else { throw Rejection.malformed }
        // An access token of the same issuer (RFC 9068) never stands in for an ID token.
        if let typ = header.typ?.lowercased(), typ == "at+jwt" || typ == "application/at+jwt" { throw Rejection.accessToken }
        guard let keyType = Self.algorithms[header.alg] else { throw Rejection.algorithm(header.alg) }
        guard let kid = header.kid, !kid.isEmpty, kid.utf8.count <= 256 else { throw Rejection.missingKid }
        let (document, remote) = try await discovery.current()
        let fetched: RemoteKeySet.Keys
        do { fetched = try await remote.keys(for: kid) } catch { throw Rejection.unknownKid }
        let keys = try await keys(fetched)
        guard let type = keys.types[kid] else { throw Rejection.unknownKid }
        guard type == keyType else { throw Rejection.keyType }

        let claims: [String: JSONValue]
        if keyType == "OKP Ed25519" {
            guard let key = keys.ed25519[kid], let signature = Base64URL.decode(parts[2]),
                Ed25519.verify(signature: signature, message: Array((parts[0] + "." + parts[1]).utf8), publicKey: key),
                let payload = Base64URL.decode(parts[1]), let decoded = try? JSONDecoder().decode([String: JSONValue].self, from: Data(payload))
            else { throw Rejection.signature }
            claims = decoded
        } else {
            guard let collection = keys.collections[header.alg], let verified = try? await collection.verify(token, as: RawClaims.self) else {
                throw Rejection.signature
            }
            claims = verified.values
        }
        return try check(claims, nonce: nonce, now: now, discoveredIssuer: document.issuer, web: web)
    }

    private func keys(_ fetched: RemoteKeySet.Keys) async throws -> OIDCKeys {
        if let cached, cached.generation == fetched.generation { return cached.keys }
        let keys = try await OIDCKeys.load(json: fetched.json)
        cached = (fetched.generation, keys)
        return keys
    }

    func check(_ claims: [String: JSONValue], nonce: String?, now: Date, discoveredIssuer: String, web: Bool = false) throws(Rejection) -> Identity {
        func string(_ name: String) -> String? { if case .string(let s)? = claims[name] { s } else { nil } }
        func number(_ name: String) -> Double? { if case .number(let n)? = claims[name] { n } else { nil } }
        guard let iss = string("iss"), upstream.accepts(issuer: iss, discovered: discoveredIssuer, tenant: string("tid")) else { throw .issuer }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let a)?: audiences = [a]
        case .array(let list)?: audiences = list.compactMap { if case .string(let a) = $0 { a } else { nil } }
        default: throw .audience
        }
        let accepted = Set([upstream.clientID] + (web ? [] : upstream.audiences))
        guard audiences.contains(where: accepted.contains) else { throw .audience }
        let t = now.timeIntervalSince1970
        guard let exp = number("exp"), exp > t - clockSkew else { throw .expired }
        guard let iat = number("iat"), iat <= t + clockSkew else { throw .issuedInFuture }
        let subject: String
        if upstream.kind == .microsoft {
            // A Microsoft account is its tenant and its object id; `sub` differs per app.
            guard let tid = string("tid"), let oid = string("oid"), !tid.isEmpty, !oid.isEmpty else { throw .subject }
            subject = tid + ":" + oid
        } else {
            guard let sub = string(upstream.subjectClaim) ?? number(upstream.subjectClaim).map({ String(Int64($0)) }) else { throw .subject }
            subject = sub
        }
        guard !subject.isEmpty, subject.utf8.count <= 255 else { throw .subject }
        switch (string("nonce"), nonce) {
        case (nil, nil): if upstream.requireNonce { throw .unexpectedNonce }
        case (.some, nil): throw .nonceMissing
        case (nil, .some): throw .unexpectedNonce
        case (.some(let claimed), .some(let raw)):
            let hashed = upstream.nonceHash == .sha256 && !web
            let expected = hashed ? Hex.encode(SHA256.hash(raw)) : raw
            let presented = hashed ? claimed.lowercased() : claimed
            guard ConstantTime.equals(Array(presented.utf8), Array(expected.utf8)) else { throw .nonceMismatch }
        }
        var verified = false
        switch claims["email_verified"] {
        case .bool(let b)?: verified = b
        case .string(let s)?: verified = s == "true"
        default: verified = false
        }
        return Identity(
            subject: subject, email: string("email"), emailVerified: verified, name: string("name"), expiresAt: Date(timeIntervalSince1970: exp),
            issuer: iss)
    }
}
