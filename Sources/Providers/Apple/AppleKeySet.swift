import AuthKernel
import Foundation
import HTTPTypes
import JWTKit
import Logging

/// Apple's public keys, fetched from `apple.jwks_url` and cached.
///
/// - Cached for the response's `Cache-Control: max-age`, or a day without one.
/// - A token with an unknown `kid` triggers a refetch, at most once per `jwks_refetch_interval`.
/// - When Apple is unreachable the cached keys keep serving; start-up never waits for Apple.
actor AppleKeySet {
    let url: String
    let refetchInterval: TimeInterval
    let clock: any AuthClock
    let logger: Logger
    let http: any OutboundHTTP
    private var keys = JWTKeyCollection()
    private var kids: Set<String> = []
    private var expiresAt: Date?
    private var lastAttempt: Date?
    private var inflight: Task<Void, Never>?
    /// Completed fetches (for tests and logs).
    private(set) var fetches = 0

    init(url: String, refetchInterval: Int, clock: any AuthClock, logger: Logger, http: any OutboundHTTP) {
        self.http = http
        self.url = url
        self.refetchInterval = TimeInterval(refetchInterval)
        self.clock = clock
        self.logger = logger
    }

    enum Failure: Error { case unknownKid(String), noKeys }

    /// The key collection when it knows `kid`, refetching first when the kid is unknown (throttled)
    /// or the cache has expired.
    func keys(for kid: String) async throws -> JWTKeyCollection {
        let now = clock.now()
        let fresh = expiresAt.map { $0 > now } ?? false
        if !(kids.contains(kid) && fresh) {
            if let inflight {
                await inflight.value
            } else if lastAttempt.map({ now.timeIntervalSince($0) >= refetchInterval }) ?? true {
                await refresh()
            }
        }
        guard kids.contains(kid) else { throw Failure.unknownKid(kid) }
        return keys
    }

    /// Fetches the JWKS now (coalescing concurrent callers); keeps the old keys on any failure.
    /// Cancelling the caller (e.g. at shutdown) abandons the fetch.
    func refresh() async {
        if let inflight { return await inflight.value }
        lastAttempt = clock.now()
        let task = Task { await self.fetch() }
        inflight = task
        await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
        inflight = nil
    }

    /// Seconds until the cache should be renewed (for the background refresher).
    func secondsUntilExpiry() -> TimeInterval {
        guard let expiresAt else { return 0 }
        return max(0, expiresAt.timeIntervalSince(clock.now()))
    }

    private func fetch() async {
        do {
            let response = try await http.send(OutboundRequest(url: url, headers: [.accept: "application/json"]))
            guard response.status == .ok else { throw HTTPStatusError(status: response.status.code) }
            let json = String(decoding: response.body, as: UTF8.self)
            let collection = JWTKeyCollection()
            try await collection.add(jwksJSON: json)
            let jwks = try JSONDecoder().decode(JWKSKids.self, from: Data(json.utf8))
            keys = collection
            kids = Set(jwks.keys.compactMap(\.kid))
            expiresAt = clock.now().addingTimeInterval(Self.maxAge(response.headers) ?? 86_400)
            fetches += 1
            logger.info("fetched Apple's keys", metadata: ["apple.kids": "\(kids.sorted().joined(separator: ","))"])
        } catch {
            logger.warning("could not fetch Apple's keys; keeping the cached ones", metadata: ["error": "\(error)", "apple.cached_keys": "\(kids.count)"])
        }
    }

    static func maxAge(_ headers: HTTPFields) -> TimeInterval? {
        for value in headers[values: .cacheControl] {
            for directive in value.split(separator: ",") {
                let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Int(parts[1]), seconds >= 0 {
                    return TimeInterval(seconds)
                }
            }
        }
        return nil
    }

    private struct JWKSKids: Decodable {
        struct Key: Decodable { var kid: String? }
        var keys: [Key]
    }
}

struct HTTPStatusError: Error, CustomStringConvertible {
    let status: Int
    var description: String { "HTTP status \(status)" }
}
