/// Failures of the libsodium wrappers.
public enum CryptoError: Error, Equatable, Sendable {
    /// A key or seed has the wrong length or format.
    case invalidKey
    /// libsodium could not allocate the memory Argon2id asked for.
    case outOfMemory
    /// A stored password hash is not a PHC string libsodium understands.
    case invalidHash
}
