import AuthKernel
import Foundation

/// What registering or updating a client sets: the flags of `authd clients create|update` and the
/// JSON body of `/api/v1/admin/clients`. An update changes only the fields it names.
package struct OpenIDClientSettings: Codable, Sendable, Equatable {
    package var name: String?
    package var redirectURIs: [String]?
    package var postLogoutRedirectURIs: [String]?
    /// Only at registration: a public client has no secret and always uses PKCE.
    package var isPublic: Bool?
    package var firstParty: Bool?
    package var pkceOptional: Bool?
    package var idTokenAlg: String?
    package var claims: [String]?
    package var allowPin: Bool?
    package var unverifiedEmail: Bool?
    /// The groups whose members may sign in; empty: everyone.
    package var allowedGroups: [String]?
    /// The app's logo on the sign-in page: an `https` URL or a `data:image/…;base64,` URI; "" removes it.
    package var logoURI: String?

    package init() {}

    package enum CodingKeys: String, CodingKey, CaseIterable {
        case name, redirectURIs = "redirect_uris", postLogoutRedirectURIs = "post_logout_redirect_uris", isPublic = "public"
        case firstParty = "first_party", pkceOptional = "pkce_optional", idTokenAlg = "id_token_alg", claims, allowPin = "allow_pin"
        case unverifiedEmail = "unverified_email", allowedGroups = "allowed_groups", logoURI = "logo_uri"
    }

    /// The longest `https` logo URL, and the longest `data:` logo URI.
    static let maxLogoURL = 2048, maxLogoData = 64 * 1024
    /// The images a `data:` logo may be.
    static let logoTypes = ["image/png", "image/svg+xml", "image/jpeg", "image/webp"]

    /// Whether `uri` is a logo the sign-in page may show: an `https` URL with a host (≤ 2048
    /// characters) or a base64 `data:` URI of a PNG, SVG, JPEG or WebP image (≤ 64 KiB).
    static func isValidLogo(_ uri: String) -> Bool {
        if uri.lowercased().hasPrefix("https://") {
            guard uri.utf8.count <= maxLogoURL, uri.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
                let c = URLComponents(string: uri), c.host?.isEmpty == false, PageGate.imageSource(uri) != nil
            else { return false }
            return true
        }
        guard uri.utf8.count <= maxLogoData, uri.hasPrefix("data:"), let comma = uri.firstIndex(of: ",") else { return false }
        let header = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma]
        guard header.hasSuffix(";base64"), logoTypes.contains(String(header.dropLast(7))) else { return false }
        let body = uri[uri.index(after: comma)...]
        return !body.isEmpty && body.utf8.allSatisfy { isalnum(Int32($0)) != 0 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") }
    }

    /// The registered and standard claim names (JWT, OpenID Connect Core §5.1 and the ID token's
    /// own) that `claims` may not take over.
    static let reservedClaims: Set<String> = [
        "iss", "sub", "aud", "exp", "nbf", "iat", "jti", "typ", "cty", "auth_time", "nonce", "acr", "amr", "azp", "sid", "at_hash", "c_hash",
        "client_id", "scope", "cnf", "act", "may_act", "name", "given_name", "family_name", "middle_name", "nickname", "preferred_username",
        "profile", "picture", "website", "email", "email_verified", "gender", "birthdate", "zoneinfo", "locale", "phone_number",
        "phone_number_verified", "address", "updated_at", "events", "txn", "_claim_names", "_claim_sources",
    ]

    /// The client these settings make of `client` (everything checked), or a 400 naming the field.
    func applied(to client: OpenIDClient) throws -> OpenIDClient {
        var c = client
        if let name {
            guard (1...100).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw AuthError.invalidRequest("A client's name is 1 to 100 characters, without control characters.", field: "name")
            }
            c.name = name
        }
        if let redirectURIs {
            guard !redirectURIs.isEmpty, redirectURIs.count <= 20, redirectURIs.allSatisfy(OpenIDClient.isValidRedirect) else {
                throw AuthError.invalidRequest(
                    "Give 1 to 20 redirect URIs: https, http to loopback, or a native app's own scheme (com.example.app:/…), without a fragment.",
                    field: "redirect_uris")
            }
            c.redirectURIs = redirectURIs
        }
        if let postLogoutRedirectURIs {
            guard postLogoutRedirectURIs.count <= 20, postLogoutRedirectURIs.allSatisfy(OpenIDClient.isValidRedirect) else {
                throw AuthError.invalidRequest(
                    "Give at most 20 post-logout redirect URIs, each as a redirect URI is (https, http to loopback or an app's scheme).",
                    field: "post_logout_redirect_uris")
            }
            c.postLogoutRedirectURIs = postLogoutRedirectURIs
        }
        if let idTokenAlg {
            guard OpenIDClients.algorithms.contains(idTokenAlg) else {
                throw AuthError.invalidRequest("The ID token algorithm is RS256, EdDSA or Ed25519.", field: "id_token_alg")
            }
            c.idTokenAlg = idTokenAlg
        }
        if let claims {
            for claim in claims {
                guard (1...64).contains(claim.utf8.count), claim.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || ($0 < 0x80 && isalnum(Int32($0)) != 0) })
                else { throw AuthError.invalidRequest("A claim is an app_metadata key of 1 to 64 letters, digits, `_` or `-`.", field: "claims") }
                guard !Self.reservedClaims.contains(claim) else {
                    throw AuthError.invalidRequest("`\(claim)` is a registered or standard claim; name another app_metadata key.", field: "claims")
                }
            }
            guard claims.count <= 20, Set(claims).count == claims.count else {
                throw AuthError.invalidRequest("Name at most 20 claims, each once.", field: "claims")
            }
            c.claims = claims
        }
        if let firstParty { c.firstParty = firstParty }
        if let pkceOptional { c.pkceOptional = pkceOptional }
        if let allowPin { c.allowPin = allowPin }
        if let unverifiedEmail { c.unverifiedEmail = unverifiedEmail }
        if let allowedGroups { c.allowedGroups = try UserGroups.validate(allowedGroups, field: "allowed_groups") }
        if let logoURI {
            guard logoURI.isEmpty || Self.isValidLogo(logoURI) else {
                throw AuthError.invalidRequest(
                    "A logo is an https URL of at most 2048 characters, or a data:image/(png|svg+xml|jpeg|webp);base64, URI of at most 64 KiB.",
                    field: "logo_uri")
            }
            c.logoURI = logoURI.isEmpty ? nil : logoURI
        }
        if c.isPublic, c.pkceOptional { throw AuthError.invalidRequest("A public client always uses PKCE.", field: "pkce_optional") }
        return c
    }
}
