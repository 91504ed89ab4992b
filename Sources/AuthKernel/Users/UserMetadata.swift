package import AuthStorage

/// The two metadata objects of a user (contract §8): `user_metadata`, which the user sets, and
/// `app_metadata`, which only the app's backend sets and access tokens carry.
package enum UserMetadata {
    /// Largest `user_metadata`, in bytes of its compact JSON.
    package static let maxUserBytes = 4096
    /// Largest `app_metadata`: it rides in every access token, so it stays small.
    package static let maxAppBytes = 1024

    /// The object `value` holds, or 400 `INVALID_REQUEST` naming `field` when it is not an object or
    /// is larger than `maxBytes` written compactly. `null` clears it (an empty object).
    package static func validate(_ value: JSONValue, field: String, maxBytes: Int) throws(AuthError) -> [String: JSONValue] {
        let object: [String: JSONValue]
        switch value {
        case .null: return [:]
        case .object(let o): object = o
        default: throw AuthError.invalidRequest("The field `\(field)` must be a JSON object (or null to clear it).", field: field)
        }
        var w = JSONWriter(capacity: 256)
        w.value(.object(object))
        guard w.bytes.count <= maxBytes else {
            throw AuthError.invalidRequest("The field `\(field)` may be at most \(maxBytes) bytes of JSON.", field: field)
        }
        return object
    }
}
