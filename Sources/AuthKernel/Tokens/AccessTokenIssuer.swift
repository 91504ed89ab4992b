import Foundation

/// Signs access tokens: compact JWS with header `{"alg":"EdDSA","typ":"at+jwt","kid":…}`.
package struct AccessTokenIssuer: Sendable {
    /// The keys.
    package let keyRing: SigningKeyRing
    /// Creates an issuer signing with the ring's active key.
    package init(keyRing: SigningKeyRing) { self.keyRing = keyRing }

    /// Returns the signed token for `claims`.
    package func sign(_ claims: AccessTokenClaims) throws -> String {
        let key = keyRing.active
        let header = #"{"alg":"EdDSA","kid":"\#(key.kid)","typ":"at+jwt"}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(claims.json())
        return signingInput + "." + Base64URL.encode(key.keyPair.sign(Array(signingInput.utf8)))
    }
}
