/// Values that hold a secret (a key, a pepper) describe themselves by their type's name only: a
/// service logged at start-up (ServiceLifecycle lists them at debug level), a `print` or a `dump`
/// must never write the bytes.
protocol RedactedDescription: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {}

extension RedactedDescription {
    /// The type's name, nothing it holds.
    public var description: String { "\(Self.self)(redacted)" }
    /// The type's name, nothing it holds.
    public var debugDescription: String { description }
    /// No children: `dump` and mirrors see nothing inside.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension SecretBox: RedactedDescription {}
extension OneTimeCodeService: RedactedDescription {}
extension SingleUseTokens: RedactedDescription {}
extension ApprovalService: RedactedDescription {}
extension Kernel: RedactedDescription {}
