public import Foundation
import Synchronization

/// Accounts that a sign-in from elsewhere may never join by its email alone (contract §16): an
/// operator's of the console, whose account links another way in only from a fresh session of its
/// own. A provider that would join an existing account on a trusted email asks first.
///
/// ```swift
/// try await kernel.protectedAccounts.contains(holder.id)
/// ```
public final class ProtectedAccounts: Sendable {
    /// Whether the account with this id is protected.
    public typealias Check = @Sendable (_ userID: UUID) async throws -> Bool
    private let checks = Mutex<[Check]>([])

    /// Creates an empty list.
    public init() {}

    /// Adds a kind of protected account (the console registers its operators).
    public func register(_ check: @escaping Check) {
        checks.withLock { $0.append(check) }
    }

    /// Whether any registered check protects the account; a check that fails protects it.
    public func contains(_ userID: UUID) async throws -> Bool {
        for check in checks.withLock({ $0 }) where (try? await check(userID)) ?? true { return true }
        return false
    }
}
