package import AuthStorage
import Synchronization

/// A store that counts the writes made through it, for tests that must show two answers do the same
/// work (an unknown address and a known one) without timing them.
package final class CountingStore: AuthStore {
    private let base: any AuthStore
    private let writes = Atomic<Int>(0)

    /// Wraps `base`.
    package init(_ base: any AuthStore) { self.base = base }

    /// The writes made so far (each call, whether or not its body changed anything).
    package var writeCount: Int { writes.load(ordering: .relaxed) }

    package func read<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (StoreState) throws -> R) async throws -> R {
        try await base.read(keys, body)
    }

    package func write<R: Sendable>(
        _ keys: [StoreKey], durability: WriteDurability, _ body: @Sendable (inout StoreState) throws -> R
    ) async throws -> R {
        writes.add(1, ordering: .relaxed)
        return try await base.write(keys, durability: durability, body)
    }

    package func waitUntilDurable() async throws { try await base.waitUntilDurable() }
    package func load(streaming produce: @Sendable (_ store: @Sendable ([StoreChange]) async throws -> Void) async throws -> Void, stored: @Sendable @escaping (Int) -> Void) async throws {
        try await base.load(streaming: produce, stored: stored)
    }
    package func counts() async throws -> StoreCounts { try await base.counts() }
    package var isShared: Bool { base.isShared }
    package var isWritable: Bool { get async { await base.isWritable } }
    package func close() async { await base.close() }
}
