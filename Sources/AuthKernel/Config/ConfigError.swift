/// A configuration file or value that authd refuses to start with. The message names the key.
public struct ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A sentence naming the offending key and what is wrong with it.
    public let message: String

    /// Creates an error with a message that names the key.
    public init(_ message: String) { self.message = message }

    /// The text shown for it.
    public var description: String { message }
}
