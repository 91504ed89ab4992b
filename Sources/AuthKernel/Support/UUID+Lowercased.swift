public import Foundation

extension UUID {
    /// The lower-case form authd uses on the wire and in logs (`sub`, `sid`, `user.id`).
    public var lowercased: String { uuidString.lowercased() }
}
