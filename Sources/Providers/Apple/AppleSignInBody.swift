/// The body of `POST /api/v1/auth/apple`, in the contract's snake_case or the camelCase that
/// AuthenticationServices code tends to send.
struct AppleSignInBody: Decodable {
    var identityToken: String
    var authorizationCode: String?
    var nonce: String?
    var fullName: FullName?
    var deviceName: String?
    var platform: String?

    struct FullName: Decodable {
        var givenName: String?
        var familyName: String?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            givenName = try c.either(String.self, "given_name", "givenName")
            familyName = try c.either(String.self, "family_name", "familyName")
        }

        /// "Given Family", or nil when both are blank.
        var displayName: String? {
            let joined = [givenName, familyName].compactMap { $0?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
            return joined.isEmpty ? nil : joined
        }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        guard let token = try c.either(String.self, "identity_token", "identityToken") else {
            throw DecodingError.keyNotFound(AnyKey("identity_token"), .init(codingPath: [], debugDescription: "missing"))
        }
        identityToken = token
        authorizationCode = try c.either(String.self, "authorization_code", "authorizationCode")
        nonce = try c.either(String.self, "nonce", "nonce")
        fullName = try c.either(FullName.self, "full_name", "fullName")
        deviceName = try c.either(String.self, "device_name", "deviceName")
        platform = try c.either(String.self, "platform", "platform")
    }
}

/// A coding key made from any string.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// The value under the first of two spellings that is present and not null.
    func either<T: Decodable>(_ type: T.Type, _ first: String, _ second: String) throws -> T? {
        if let value = try decodeIfPresent(T.self, forKey: AnyKey(first)) { return value }
        return try decodeIfPresent(T.self, forKey: AnyKey(second))
    }
}

import Foundation
