import AuthKernel
import Foundation

/// A registered passkey, in the user's record under the secret key `passkeys` (a list); the
/// user's identity `("passkey", base64url(SHA-256(credential id)))` finds the user at sign-in.
struct PasskeyRecord: Codable, Sendable, Equatable {
    /// The credential id, base64url.
    var id: String
    /// COSE algorithm: -7 (ES256) or -8 (EdDSA).
    var algorithm: Int64
    /// The public key, base64url (ES256: x ‖ y; EdDSA: x).
    var publicKey: String
    var signCount: UInt32
    var name: String
    var createdAt: Double
    var lastUsedAt: Double?
    var backupEligible: Bool
    var backedUp: Bool

    static let key = "passkeys"
    static let maxNameLength = 100

    enum CodingKeys: String, CodingKey {
        case id, algorithm, publicKey = "public_key", signCount = "sign_count", name, createdAt = "created_at", lastUsedAt = "last_used_at"
        case backupEligible = "backup_eligible", backedUp = "backed_up"
    }

    var coseKey: COSEKey? {
        guard let algorithm = COSEKey.Algorithm(rawValue: algorithm), let key = Base64URL.decode(publicKey) else { return nil }
        return COSEKey(algorithm: algorithm, key: key)
    }

    /// The identity subject of a credential id: short whatever the id's length (up to 1023 bytes).
    static func subject(credentialID: [UInt8]) -> String { Base64URL.encode(SHA256.hash(credentialID)) }

    static func all(_ user: UserRecord) -> [PasskeyRecord] { user.secret(key, as: [PasskeyRecord].self) ?? [] }
}
