package import Foundation
import Synchronization

/// The signing keys in use: the newest unretired one signs; every key whose tokens may still be
/// unexpired verifies and is published in the JWKS.
package final class SigningKeyRing: Sendable {
    private let keys: Mutex<[SigningKey]>
    private let accessTTL: Int

    /// Creates a ring over `keys` (at least one unretired).
    package init(keys: [SigningKey], accessTTL: Int) {
        precondition(keys.contains { $0.retiredAt == nil }, "a signing key ring needs an active key")
        self.keys = Mutex(keys.sorted { $0.createdAt < $1.createdAt })
        self.accessTTL = accessTTL
    }

    /// The key that signs new tokens.
    package var active: SigningKey {
        keys.withLock { $0.last { $0.retiredAt == nil }! }
    }

    /// Keys that still verify at `now`: unretired ones, and retired ones whose last token has not expired.
    package func verificationKeys(now: Date) -> [SigningKey] {
        keys.withLock { all in
            all.filter { key in
                guard let retired = key.retiredAt else { return true }
                return retired.addingTimeInterval(TimeInterval(accessTTL)) > now
            }
        }
    }

    /// The key with this `kid`, if it still verifies.
    package func verificationKey(kid: String, now: Date) -> SigningKey? {
        verificationKeys(now: now).first { $0.kid == kid }
    }

    /// Every key, oldest first, including retired ones that no longer verify.
    package var all: [SigningKey] { keys.withLock { $0 } }

    /// Retires the active key at `now` and makes `newKey` the one that signs. The retired key keeps
    /// verifying (and stays in the JWKS) until every token it signed has expired.
    /// - Returns: the retired key, to be saved with its `retired_at`.
    @discardableResult
    package func rotate(to newKey: SigningKey, now: Date) -> SigningKey {
        keys.withLock { keys in
            let index = keys.lastIndex { $0.retiredAt == nil }!
            keys[index].retiredAt = now
            keys.append(newKey)
            return keys[index]
        }
    }

    /// Takes the keys another instance saved (a rotation there); returns whether anything changed.
    @discardableResult
    package func replace(with newKeys: [SigningKey]) -> Bool {
        guard newKeys.contains(where: { $0.retiredAt == nil }) else { return false }
        let sorted = newKeys.sorted { $0.createdAt < $1.createdAt }
        return keys.withLock { keys in
            let same = keys.map(\.kid) == sorted.map(\.kid) && keys.map(\.retiredAt) == sorted.map(\.retiredAt)
            if !same { keys = sorted }
            return !same
        }
    }

    /// The JWKS document: `{"keys":[...]}`.
    package func jwks(now: Date) -> [String: [[String: String]]] {
        ["keys": verificationKeys(now: now).reversed().map(\.jwk)]
    }
}
