import AuthKernel
import Foundation

/// WebAuthn challenges, single use and short-lived, kept through the kernel's one-time codes: a
/// challenge is 32 random bytes followed by the digits of a code issued for it. The code's key
/// binds the challenge: the session for a registration, the sign-in challenge for a second
/// factor, or (for a passkey sign-in, where nobody is known yet) the hash of the random bytes.
struct PasskeyChallenges: Sendable {
    let codes: OneTimeCodeService

    // Tried only after a signature verified, so a wrong try is a real assertion for another
    // ceremony; a few of them must not kill the right one.
    static let policy = CodePolicy(ttl: 300, resendInterval: 0, maxAttempts: 5, maxFailures: 1000, failureWindow: 300)
    static let nonceLength = 32

    enum Purpose: String {
        case register = "passkey.register"
        case login = "passkey.login"
        case secondFactor = "passkey.second_factor"
    }

    /// A new challenge (base64url), bound to `key` (nil: bound to itself).
    func issue(_ purpose: Purpose, key: String? = nil) async throws -> String {
        let nonce = SecureRandom.bytes(Self.nonceLength)
        let code = try await codes.issue(
            purpose: purpose.rawValue, key: key ?? Self.selfKey(nonce), policy: Self.policy, payload: ["nonce": .string(Base64URL.encode(nonce))])
        return Base64URL.encode(nonce + Array(code.utf8))
    }

    /// Uses up the challenge a client signed, if it is one this server issued for `key` and it is
    /// still live; throws ``WebAuthnError`` otherwise.
    func consume(_ challenge: String, _ purpose: Purpose, key: String? = nil) async throws {
        guard challenge.utf8.count <= 128, let bytes = Base64URL.decode(challenge), bytes.count == Self.nonceLength + Self.policy.digits else {
            throw WebAuthnError("the challenge is not one of this server's")
        }
        let nonce = Array(bytes.prefix(Self.nonceLength))
        let code = String(decoding: bytes.suffix(Self.policy.digits), as: UTF8.self)
        let payload: [String: JSONValue]
        do {
            payload = try await codes.verify(purpose: purpose.rawValue, key: key ?? Self.selfKey(nonce), code: code, policy: Self.policy)
        } catch is AuthError {
            throw WebAuthnError("the challenge is unknown, used or expired")
        }
        guard case .string(let stored)? = payload["nonce"], ConstantTime.equals(Array(stored.utf8), Array(Base64URL.encode(nonce).utf8)) else {
            throw WebAuthnError("the challenge was issued for another ceremony")
        }
    }

    static func selfKey(_ nonce: [UInt8]) -> String { Hex.encode(SHA256.hash(nonce)) }
}
