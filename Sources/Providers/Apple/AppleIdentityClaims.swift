import JWTKit

/// The claims of an Apple identity token. authd checks them itself (issuers list, audiences, skew,
/// nonce), so jwt-kit's part is only the RS256 signature.
struct AppleIdentityClaims: JWTPayload {
    var iss: String
    var aud: [String]
    var exp: Double
    var iat: Double
    var sub: String
    var nonce: String?
    var email: String?
    var emailVerified: Bool?
    var isPrivateEmail: Bool?

    enum CodingKeys: String, CodingKey {
        case iss, aud, exp, iat, sub, nonce, email, emailVerified = "email_verified", isPrivateEmail = "is_private_email"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        iss = try c.decode(String.self, forKey: .iss)
        if let one = try? c.decode(String.self, forKey: .aud) { aud = [one] } else { aud = try c.decode([String].self, forKey: .aud) }
        exp = try c.decode(Double.self, forKey: .exp)
        iat = try c.decode(Double.self, forKey: .iat)
        sub = try c.decode(String.self, forKey: .sub)
        nonce = try c.decodeIfPresent(String.self, forKey: .nonce)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try Self.flexibleBool(c, .emailVerified)
        isPrivateEmail = try Self.flexibleBool(c, .isPrivateEmail)
    }

    /// Apple sends these as booleans or as the strings "true"/"false".
    static func flexibleBool(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Bool? {
        if let b = try? c.decodeIfPresent(Bool.self, forKey: key) { return b }
        guard let s = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
        switch s.lowercased() {
        case "true": return true
        case "false": return false
        default: throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not a boolean")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(iss, forKey: .iss)
        try c.encode(aud, forKey: .aud)
        try c.encode(exp, forKey: .exp)
        try c.encode(iat, forKey: .iat)
        try c.encode(sub, forKey: .sub)
        try c.encodeIfPresent(nonce, forKey: .nonce)
        try c.encodeIfPresent(email, forKey: .email)
        try c.encodeIfPresent(emailVerified, forKey: .emailVerified)
        try c.encodeIfPresent(isPrivateEmail, forKey: .isPrivateEmail)
    }

    /// Claims are checked by ``AppleTokenVerifier`` with the kernel's clock.
    func verify(using algorithm: some JWTAlgorithm) throws {}
}
