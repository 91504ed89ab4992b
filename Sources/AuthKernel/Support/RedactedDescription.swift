/// A type that holds a secret or configuration (a key, a pepper, a password, a provider's settings)
/// and describes itself by its type's name only: a service logged at start-up (ServiceLifecycle
/// lists them at debug level), an interpolation into a log line, a `print` or a `dump` must never
/// write what it holds (contract §17).
///
/// ```swift
/// extension InviteCodeProvider: RedactedDescription {}
/// ```
public protocol RedactedDescription: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {}

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
extension ConfigSection: RedactedDescription {}
extension AuthConfig: RedactedDescription {}
extension AuthConfig.MailSettings: RedactedDescription {}
extension AuthConfig.StorageSettings: RedactedDescription {}
extension AuthConfig.PostgresSettings: RedactedDescription {}
extension ConfigEnvironment: RedactedDescription {}
extension ConfigEnvironment.Variable: RedactedDescription {}
extension SMTPSettings: RedactedDescription {}
extension PushSettings: RedactedDescription {}
extension PushSettings.APNs: RedactedDescription {}
extension WebhookSettings: RedactedDescription {}
extension WebhookSettings.Endpoint: RedactedDescription {}
