import Foundation

/// The optional `device_name` and `platform` a sign-in body may carry to label its session.
public struct DeviceInfo: Sendable, Equatable {
    /// e.g. "Anna's iPhone".
    public var name: String?
    /// e.g. "ios".
    public var platform: String?

    /// Longest label accepted, in Unicode code points.
    public static let maxLength = 100

    /// Validates labels: at most 100 Unicode code points as sent, trimmed, no control characters; blank means absent.
    /// - Throws: 400 `INVALID_REQUEST` naming the field.
    public init(name: String?, platform: String?) throws(AuthError) {
        self.name = try Self.clean(name, field: "device_name")
        self.platform = try Self.clean(platform, field: "platform")
    }

    /// No labels.
    public static let none = DeviceInfo()
    private init() {}

    private static func clean(_ value: String?, field: String) throws(AuthError) -> String? {
        try ShortLabel.clean(value, field: field, maxLength: maxLength)
    }
}
