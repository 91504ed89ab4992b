import Foundation

/// The optional `device_name` and `platform` a sign-in body may carry to label its session.
public struct DeviceInfo: Sendable, Equatable {
    /// e.g. "Anna's iPhone".
    public var name: String?
    /// e.g. "ios".
    public var platform: String?

    /// Longest label accepted, in characters.
    public static let maxLength = 100

    /// Validates labels: at most 100 characters, no control characters; blank means absent.
    /// - Throws: 400 `INVALID_REQUEST` naming the field.
    public init(name: String?, platform: String?) throws(AuthError) {
        self.name = try Self.clean(name, field: "device_name")
        self.platform = try Self.clean(platform, field: "platform")
    }

    /// No labels.
    public static let none = DeviceInfo()
    private init() {}

    private static func clean(_ value: String?, field: String) throws(AuthError) -> String? {
        guard let trimmed = value?.trimmingCharacters(in: .whitespaces), !trimmed.isEmpty else { return nil }
        guard trimmed.count <= maxLength else {
            throw AuthError.invalidRequest("The field `\(field)` must be at most \(maxLength) characters.", field: field)
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthError.invalidRequest("The field `\(field)` must not contain control characters.", field: field)
        }
        return trimmed
    }
}

