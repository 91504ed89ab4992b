import AuthKernel
import Synchronization

/// The methods each mounted path pattern serves, so that a known path asked with another method is
/// answered 405 with an `Allow` header rather than 404 (Hummingbird's router does not tell the two
/// apart). Filled once, after every route is mounted.
package final class RouteTable: Sendable {
    private struct Pattern {
        var segments: [Substring]
        var methods: [String]
    }
    private let patterns = Mutex<[Pattern]>([])

    /// Creates an empty table.
    package init() {}

    /// Records the routes, each as a method and a path whose `{name}` or `:name` segments match anything.
    package func set(_ routes: [(method: String, path: String)]) {
        var byPath: [String: [String]] = [:]
        for route in routes { byPath[route.path, default: []].append(route.method) }
        patterns.withLock {
            $0 = byPath.map { Pattern(segments: Self.segments($0.key), methods: $0.value.sorted()) }
        }
    }

    /// The methods served at `path`, empty when no pattern matches it.
    package func methods(for path: String) -> [String] {
        let parts = Self.segments(path)
        return patterns.withLock { patterns in
            // Only the most specific patterns count: `/reset/device/initiate` is not `/reset/device/{id}`.
            var found: Set<String> = []
            var bestLiterals = -1
            for pattern in patterns where pattern.segments.count == parts.count {
                let isParameter = pattern.segments.map { $0.hasPrefix("{") || $0.hasPrefix(":") }
                guard zip(zip(pattern.segments, parts), isParameter).allSatisfy({ $1 || $0.0 == $0.1 }) else { continue }
                let literals = isParameter.filter { !$0 }.count
                if literals > bestLiterals { (found, bestLiterals) = ([], literals) }
                if literals == bestLiterals { found.formUnion(pattern.methods) }
            }
            return found.sorted()
        }
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
