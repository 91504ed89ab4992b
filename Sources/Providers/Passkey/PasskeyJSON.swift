import AuthKernel
import Hummingbird

/// The WebAuthn JSON the ceremonies exchange (Level 3's `…JSON` types, unwrapped), camelCase as
/// the specification spells it.
extension PasskeyProvider {
    struct Descriptor: Codable, Sendable {
        var type = "public-key"
        var id: String
    }

    /// `PublicKeyCredentialCreationOptionsJSON`.
    struct CreationOptions: ResponseEncodable {
        struct RP: Codable { var id: String; var name: String }
        struct User: Codable { var id: String; var name: String; var displayName: String }
        struct Parameter: Codable { var type = "public-key"; var alg: Int64 }
        struct Selection: Codable {
            var residentKey = "required"
            var requireResidentKey = true
            var userVerification = "required"
        }
        var rp: RP
        var user: User
        var challenge: String
        var pubKeyCredParams = [Parameter(alg: COSEKey.Algorithm.es256.rawValue), Parameter(alg: COSEKey.Algorithm.edDSA.rawValue)]
        var timeout = 300_000
        var excludeCredentials: [Descriptor]
        var authenticatorSelection = Selection()
        var attestation = "none"
    }

    /// `PublicKeyCredentialRequestOptionsJSON`.
    struct RequestOptions: ResponseEncodable {
        var challenge: String
        var rpId: String
        var timeout = 300_000
        var userVerification = "required"
        var allowCredentials: [Descriptor]
    }

    /// `RegistrationResponseJSON` (what is used of it).
    struct RegistrationCredential: Decodable {
        struct Response: Decodable {
            var clientDataJSON: String
            var attestationObject: String
        }
        var id: String
        var rawId: String?
        var type: String
        var response: Response
    }

    /// `AuthenticationResponseJSON` (what is used of it).
    struct AuthenticationCredential: Decodable {
        struct Response: Decodable {
            var clientDataJSON: String
            var authenticatorData: String
            var signature: String
            var userHandle: String?
        }
        var id: String
        var rawId: String?
        var type: String
        var response: Response
    }

    struct RegisterBody: Decodable {
        var credential: RegistrationCredential
        var name: String?
    }

    struct LoginBody: Decodable {
        var credential: AuthenticationCredential
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case credential, deviceName = "device_name", platform }
    }

    /// One passkey as listed.
    struct Listed: ResponseEncodable {
        var id: String
        var name: String
        var createdAt: String
        var lastUsedAt: String?
        var backedUp: Bool
        enum CodingKeys: String, CodingKey { case id, name, createdAt = "created_at", lastUsedAt = "last_used_at", backedUp = "backed_up" }
    }

    struct ListAnswer: ResponseEncodable { var passkeys: [Listed] }

    /// `/.well-known/apple-app-site-association`.
    struct AppSiteAssociation: ResponseEncodable {
        struct WebCredentials: Codable { var apps: [String] }
        var webcredentials: WebCredentials
    }
}
