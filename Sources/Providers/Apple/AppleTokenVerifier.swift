import AuthKernel
import Foundation
import JWTKit

/// Verifies Apple identity tokens: RS256 only, the key named by `kid`, then issuer, audience,
/// expiry and issue time with skew, subject, and the nonce.
struct AppleTokenVerifier: Sendable {
    let keySet: AppleKeySet
    let settings: AppleSettings

    /// Why a token was refused; logged, never shown to the client.
    enum Rejection: Error, Equatable, CustomStringConvertible {
        case malformed, algorithm(String), missingKid, unknownKid, signature, issuer, audience, expired, issuedInFuture, subject
        case nonceMissing, nonceMismatch, unexpectedNonce

        var description: String {
            switch self {
            case .malformed: "not a JWT"
            case .algorithm(let alg): "algorithm \(LogSafe.text(alg, maxLength: 40)) is not RS256"
            case .missingKid: "no kid in the header"
            case .unknownKid: "kid not in Apple's keys"
            case .signature: "bad signature"
            case .issuer: "issuer not accepted"
            case .audience: "audience not accepted"
            case .expired: "expired"
            case .issuedInFuture: "issued in the future"
            case .subject: "empty or overlong subject"
            case .nonceMissing: "the token has a nonce but the request has none"
            case .nonceMismatch: "nonce does not match"
            case .unexpectedNonce: "the request has a nonce but the token has none"
            }
        }
    }

    private struct Header: Decodable {
        var alg: String
        var kid: String?
    }

    func verify(_ token: String, nonce: String?, now: Date) async throws(Rejection) -> AppleIdentityClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count < 16_384, parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes))
        else { throw .malformed }
        guard header.alg == "RS256" else { throw .algorithm(header.alg) }
        guard let kid = header.kid, !kid.isEmpty else { throw .missingKid }
        let keys: JWTKeyCollection
        do { keys = try await keySet.keys(for: kid) } catch { throw .unknownKid }
        let claims: AppleIdentityClaims
        do { claims = try await keys.verify(token, as: AppleIdentityClaims.self) } catch { throw .signature }

        guard settings.issuers.contains(claims.iss) else { throw .issuer }
        guard claims.aud.contains(where: settings.audiences.contains) else { throw .audience }
        let t = now.timeIntervalSince1970, skew = TimeInterval(settings.clockSkew)
        guard claims.exp > t - skew else { throw .expired }
        guard claims.iat <= t + skew else { throw .issuedInFuture }
        // Apple's subjects are about 44 characters; the bound keeps an identity's key small wherever it is stored.
        guard !claims.sub.isEmpty, claims.sub.utf8.count <= 255 else { throw .subject }
        switch (claims.nonce, nonce) {
        case (nil, nil): break
        case (.some, nil): throw .nonceMissing
        case (nil, .some): throw .unexpectedNonce
        case (.some(let expected), .some(let raw)):
            guard ConstantTime.equals(Array(Hex.encode(SHA256.hash(raw)).utf8), Array(expected.lowercased().utf8)) else {
                throw .nonceMismatch
            }
        }
        return claims
    }
}
