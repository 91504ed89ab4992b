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

    package init() {}

    package enum CodingKeys: String, CodingKey, CaseIterable {
        case name, redirectURIs = "redirect_uris", postLogoutRedirectURIs = "post_logout_redirect_uris", isPublic = "public"
        case firstParty = "first_party", pkceOptional = "pkce_optional", idTokenAlg = "id_token_alg", claims, allowPin = "allow_pin"
        case unverifiedEmail = "unverified_email", allowedGroups = "allowed_groups"
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
        if c.isPublic, c.pkceOptional { throw AuthError.invalidRequest("A public client always uses PKCE.", field: "pkce_optional") }
        return c
    }
}
