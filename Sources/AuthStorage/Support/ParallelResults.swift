import Foundation

/// Results written by parallel workers, each at its own index.
package final class ParallelResults<T>: @unchecked Sendable {
    private var results: [Result<T, any Error>?]
    private let lock = NSLock()

    package init(count: Int) { results = Array(repeating: nil, count: count) }

    package func set(_ index: Int, _ result: Result<T, any Error>) {
        lock.lock()
        results[index] = result
        lock.unlock()
    }

    package func values() throws -> [T] {
        try results.map { try ($0 ?? .failure(StoreError.unavailable)).get() }
    }
}
