import Foundation
import JWTKit

/// The client secret Apple's token and revoke endpoints want: an ES256 JWT signed with the app's
/// .p8 key, `iss` the team id, `sub` the client id, `aud` `https://appleid.apple.com`, five minutes long.
actor AppleClientSecret {
    let teamID: String
    let clientID: String
    let keyID: String
    private let privateKey: ES256PrivateKey
    private var keys: JWTKeyCollection?

    struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// - Throws: when the PEM is not an EC P-256 private key.
    init(_ revocation: AppleSettings.Revocation) throws {
        teamID = revocation.teamID
        clientID = revocation.clientID
        keyID = revocation.keyID
        privateKey = try ES256PrivateKey(pem: revocation.privateKeyPEM)
    }

    func make(now: Date) async throws -> String {
        let keys = await collection()
        let iat = Int(now.timeIntervalSince1970)
        return try await keys.sign(
            Claims(iss: teamID, sub: clientID, aud: "https://appleid.apple.com", iat: iat, exp: iat + 300),
            kid: JWKIdentifier(string: keyID)
        )
    }

    private func collection() async -> JWTKeyCollection {
        if let keys { return keys }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: privateKey, kid: JWKIdentifier(string: keyID))
        self.keys = keys
        return keys
    }
}
