import AuthStorage
package import Foundation

/// Verifies access tokens and says exactly why one is refused (for logs; clients only see 401).
package struct AccessTokenVerifier: Sendable {
    /// Why a token was refused.
    package enum Rejection: Error, Equatable, Sendable, CustomStringConvertible {
        case malformed
        case unsupportedAlgorithm(String)
        case wrongType
        case unknownKey
        case badSignature
        case wrongIssuer
        case wrongAudience
        case expired
        case notYetValid

        /// For logs: the token's `alg` escaped and cut short, since anyone can send any header.
        package var description: String {
            switch self {
            case .malformed: "malformed"
            case .unsupportedAlgorithm(let alg): "unsupportedAlgorithm(\(LogSafe.text(alg, maxLength: 40)))"
            case .wrongType: "wrongType"
            case .unknownKey: "unknownKey"
            case .badSignature: "badSignature"
            case .wrongIssuer: "wrongIssuer"
            case .wrongAudience: "wrongAudience"
            case .expired: "expired"
            case .notYetValid: "notYetValid"
            }
        }
    }

    /// The keys.
    package let keyRing: SigningKeyRing
    /// Expected `iss`.
    package var issuer: String { issuerName.value }
    /// Where ``issuer`` comes from.
    let issuerName: IssuerName
    /// Expected member of `aud`.
    package let audience: String
    /// Tolerated clock difference, seconds.
    package let clockSkew: Int

    /// Longest token accepted; authd's own are around 600 bytes.
    static let maxLength = 8192

    /// Creates a verifier.
    package init(keyRing: SigningKeyRing, issuer: String, audience: String, clockSkew: Int) {
        self.init(keyRing: keyRing, issuer: IssuerName(issuer), audience: audience, clockSkew: clockSkew)
    }

    /// Creates a verifier whose issuer may be named later (a server on port 0).
    package init(keyRing: SigningKeyRing, issuer: IssuerName, audience: String, clockSkew: Int) {
        self.keyRing = keyRing
        self.issuerName = issuer
        self.audience = audience
        self.clockSkew = clockSkew
    }

    private struct Header: Decodable {
        var alg: String
        var typ: String?
        var kid: String?
        var crit: [String]?
    }

    /// Returns the claims of a valid token.
    ///
    /// Accepts only `alg` `EdDSA` (RFC 8037) or `Ed25519` (RFC 9864) with a `kid` of a key that still
    /// verifies, `typ` `at+jwt`, no `crit`, then checks `iss`, `aud`, `exp`, `nbf` and `iat` with the skew.
    package func verify(_ token: String, now: Date) throws(Rejection) -> AccessTokenClaims {
        guard token.utf8.count <= Self.maxLength else { throw .malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw .malformed }
        let decoder = JSONDecoder()
        guard let header = try? decoder.decode(Header.self, from: Data(headerBytes)) else { throw .malformed }
        guard header.alg == "EdDSA" || header.alg == "Ed25519" else { throw .unsupportedAlgorithm(header.alg) }
        guard let typ = header.typ?.lowercased(), typ == "at+jwt" || typ == "application/at+jwt" else { throw .wrongType }
        guard header.crit == nil else { throw .malformed }
        guard let kid = header.kid, let key = keyRing.verificationKey(kid: kid, now: now) else { throw .unknownKey }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard Ed25519.verify(signature: signature, message: signingInput, publicKey: key.keyPair.publicKey) else {
            throw .badSignature
        }
        guard let claims = try? decoder.decode(AccessTokenClaims.self, from: Data(payloadBytes)) else { throw .malformed }
        guard claims.iss == issuer else { throw .wrongIssuer }
        guard claims.aud.values.contains(audience) else { throw .wrongAudience }
        let t = Int(now.timeIntervalSince1970)
        guard claims.exp > t - clockSkew else { throw .expired }
        if let nbf = claims.nbf, nbf > t + clockSkew { throw .notYetValid }
        guard claims.iat <= t + clockSkew else { throw .notYetValid }
        return claims
    }
}
