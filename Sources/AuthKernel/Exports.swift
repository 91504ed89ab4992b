// The records and helpers a provider works with are defined beside the store (AuthStorage), and
// re-exported here, so that `import AuthKernel` is all a provider needs.
@_exported public import struct AuthStorage.ApprovalRecord
@_exported public import enum AuthStorage.Hex
@_exported public import struct AuthStorage.Identity
@_exported public import struct AuthStorage.JobRecord
@_exported public import enum AuthStorage.JSONValue
@_exported public import enum AuthStorage.SecureRandom
@_exported public import struct AuthStorage.SessionRecord
@_exported public import struct AuthStorage.UserRecord
@_exported public import enum AuthStorage.WriteDurability
