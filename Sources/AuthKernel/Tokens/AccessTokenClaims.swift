package import AuthStorage
/// The claims of an authd access token (contract §2).
package struct AccessTokenClaims: Codable, Sendable, Equatable {
    /// Issuer.
    package var iss: String
    /// Audience; authd issues a single string, and accepts a string or an array when verifying.
    package var aud: Audience
    /// User id.
    package var sub: String
    /// Session id.
    package var sid: String
    /// Issued at (Unix seconds).
    package var iat: Int
    /// Expiry (Unix seconds).
    package var exp: Int
    /// Not before (Unix seconds); authd does not set it but honours it.
    package var nbf: Int?
    /// Unique token id.
    package var jti: String
    /// Providers used to sign in.
    package var amr: [String]
    /// Whether the user is anonymous.
    package var isAnonymous: Bool
    /// When the user last signed in interactively (Unix seconds): the session's start, which a
    /// refresh does not move. Absent in tokens issued before it existed.
    package var authTime: Int?
    /// Claims the sign-in policies add (``SignInPolicy/claims(for:session:)``).
    package var extra: [String: JSONValue] = [:]

    /// The names the kernel sets itself, which extra claims never replace.
    package static let reservedNames: Set<String> = [
        "iss", "aud", "sub", "sid", "iat", "exp", "nbf", "jti", "amr", "is_anonymous", "auth_time", "typ", "kid", "alg",
        "app_metadata", "email", "email_verified",
    ]

    /// The reserved names the kernel itself puts in `extra`, from the user record (contract §8).
    package static let userClaims: Set<String> = ["app_metadata", "email", "email_verified"]

    /// Creates claims.
    package init(
        iss: String, aud: String, sub: String, sid: String, iat: Int, exp: Int, jti: String, amr: [String], isAnonymous: Bool, authTime: Int? = nil,
        extra: [String: JSONValue] = [:]
    ) {
        self.extra = extra
        self.iss = iss
        self.aud = Audience([aud])
        self.sub = sub
        self.sid = sid
        self.iat = iat
        self.exp = exp
        self.jti = jti
        self.amr = amr
        self.isAnonymous = isAnonymous
        self.authTime = authTime
    }

    enum CodingKeys: String, CodingKey { case iss, aud, sub, sid, iat, exp, nbf, jti, amr, isAnonymous = "is_anonymous", authTime = "auth_time" }

    /// The claims as JSON with sorted keys, written directly: `JSONEncoder` was most of the cost of
    /// signing a token (and signing is on every sign-in and refresh).
    func json() -> [UInt8] {
        var w = JSONWriter(capacity: 320)
        w.beginObject()
        w.key("amr"); w.strings(amr)
        w.key("aud")
        if aud.values.count == 1 { w.string(aud.values[0]) } else { w.strings(aud.values) }
        if let authTime { w.key("auth_time"); w.int(authTime) }
        w.key("exp"); w.int(exp)
        w.key("iat"); w.int(iat)
        w.key("is_anonymous"); w.bool(isAnonymous)
        w.key("iss"); w.string(iss)
        w.key("jti"); w.string(jti)
        if let nbf { w.key("nbf"); w.int(nbf) }
        w.key("sid"); w.string(sid)
        w.key("sub"); w.string(sub)
        for (name, value) in extra.sorted(by: { $0.key < $1.key }) where !Self.reservedNames.contains(name) || Self.userClaims.contains(name) {
            w.key(dynamic: name)
            w.value(value)
        }
        w.endObject()
        return w.bytes
    }

    /// `aud` as JWT allows it: one string or an array of strings.
    package struct Audience: Codable, Sendable, Equatable {
        /// The audiences.
        package var values: [String]
        /// Creates an audience list.
        package init(_ values: [String]) { self.values = values }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let one = try? c.decode(String.self) { values = [one] } else { values = try c.decode([String].self) }
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            if values.count == 1 { try c.encode(values[0]) } else { try c.encode(values) }
        }
    }
}
