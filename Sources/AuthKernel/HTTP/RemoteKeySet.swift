public import Foundation
public import HTTPTypes
public import Logging
public import ServiceLifecycle

/// An identity provider's public keys (a JSON Web Key Set), fetched through ``Kernel/http`` and
/// cached, for a provider that verifies the provider's ID tokens (Apple, an OpenID provider).
///
/// - Cached for the response's `Cache-Control: max-age`, or a day without one.
/// - A token naming an unknown `kid` triggers a refetch, at most once per `refetchInterval`
///   (a rotated key is picked up at once; a stream of made-up kids costs one fetch a minute).
/// - Concurrent callers share one fetch; when the fetch fails the cached keys keep serving.
/// - ``refresher`` fetches in the background: at start-up (which never waits for the provider)
///   and whenever the cache expires.
///
/// The set is handed over as its JSON, to be read by the JOSE library the provider uses:
///
/// ```swift
/// let fetched = try await remote.keys(for: kid)
/// let keys = JWTKeyCollection()
/// try await keys.add(jwksJSON: fetched.json)
/// ```
public actor RemoteKeySet {
    /// One fetched set.
    public struct Keys: Sendable, Equatable {
        /// The JSON as served.
        public let json: String
        /// The `kid` of each key.
        public let kids: Set<String>
        /// Counts up with each set fetched: a provider rebuilds what it made from `json` when it changes.
        public let generation: Int
    }

    /// Why ``keys(for:)`` found no key.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not in the set, even after a refetch (or the refetch was not due yet).
        case unknownKid(String)
        /// What the log says.
        public var description: String {
            switch self {
            case .unknownKid(let kid): "no key \(LogSafe.text(kid, maxLength: 64)) in the key set"
            }
        }
    }

    /// Who publishes the keys, for the log (`Apple`).
    public nonisolated let name: String
    /// Where.
    public nonisolated let url: String
    let refetchInterval: TimeInterval
    let http: any OutboundHTTP
    let clock: any AuthClock
    let logger: Logger
    let validate: @Sendable (String) async throws -> Void
    private var current: Keys?
    private var expiresAt: Date?
    private var lastAttempt: Date?
    private var inflight: Task<Void, Never>?
    /// Completed fetches.
    public private(set) var fetches = 0

    /// A key set at `url`.
    /// - Parameters:
    ///   - name: who publishes it, for the log.
    ///   - url: where the set is served (`https://`).
    ///   - http: the client it is fetched with, ``Kernel/http``.
    ///   - clock: the time, for the cache; `kernel.clock`.
    ///   - logger: where fetches and failures are logged.
    ///   - refetchInterval: the least time, in seconds, between two fetches an unknown `kid` causes.
    ///   - validate: called with a fetched set before it replaces the cached one; a set it throws
    ///     for (one the provider's JOSE library cannot read) is refused and the old one kept.
    public init(
        name: String, url: String, refetchInterval: Int, http: any OutboundHTTP, clock: any AuthClock, logger: Logger,
        validate: @escaping @Sendable (String) async throws -> Void = { _ in }
    ) {
        self.name = name
        self.url = url
        self.refetchInterval = TimeInterval(refetchInterval)
        self.http = http
        self.clock = clock
        self.logger = logger
        self.validate = validate
    }

    /// The set when it has `kid`, refetching first when the kid is unknown (throttled) or the cache
    /// has expired.
    /// - Throws: ``Failure/unknownKid(_:)``.
    public func keys(for kid: String) async throws(Failure) -> Keys {
        let now = clock.now()
        let fresh = expiresAt.map { $0 > now } ?? false
        if !((current?.kids.contains(kid) ?? false) && fresh) {
            if let inflight {
                await inflight.value
            } else if lastAttempt.map({ now.timeIntervalSince($0) >= refetchInterval }) ?? true {
                await refresh()
            }
        }
        guard let current, current.kids.contains(kid) else { throw .unknownKid(kid) }
        return current
    }

    /// Fetches the set now (coalescing concurrent callers); keeps the old one on any failure.
    /// Cancelling the caller (at shutdown) abandons the fetch.
    public func refresh() async {
        if let inflight { return await inflight.value }
        lastAttempt = clock.now()
        let task = Task { await self.fetch() }
        inflight = task
        await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
        inflight = nil
    }

    /// Seconds until the cache should be renewed.
    public func secondsUntilExpiry() -> TimeInterval {
        guard let expiresAt else { return 0 }
        return max(0, expiresAt.timeIntervalSince(clock.now()))
    }

    /// The background fetcher to return from ``AuthProvider/services``.
    public nonisolated var refresher: some Service { Refresher(keySet: self) }

    private struct KidsOnly: Decodable {
        struct Key: Decodable { var kid: String? }
        var keys: [Key]
    }

    private struct StatusError: Error, CustomStringConvertible {
        let status: Int
        var description: String { "HTTP status \(status)" }
    }

    private func fetch() async {
        do {
            let response = try await http.send(OutboundRequest(url: url, headers: [.accept: "application/json"]))
            guard response.status == .ok else { throw StatusError(status: response.status.code) }
            let json = String(decoding: response.body, as: UTF8.self)
            let kids = try JSONDecoder().decode(KidsOnly.self, from: Data(response.body)).keys.compactMap(\.kid)
            try await validate(json)
            current = Keys(json: json, kids: Set(kids), generation: (current?.generation ?? 0) + 1)
            expiresAt = clock.now().addingTimeInterval(Self.maxAge(response.headers) ?? 86_400)
            fetches += 1
            logger.info("fetched \(name)'s keys", metadata: ["keys.url": "\(ConfigSecrets.redactedURL(url))", "keys.kids": "\(kids.sorted().map { LogSafe.text($0, maxLength: 64) }.joined(separator: ","))"])
        } catch {
            logger.warning(
                "could not fetch \(name)'s keys; keeping the cached ones",
                metadata: ["keys.url": "\(ConfigSecrets.redactedURL(url))", "error": "\(error)", "keys.cached": "\(current?.kids.count ?? 0)"])
        }
    }

    /// `Cache-Control: max-age` in seconds, when the response has one.
    public static func maxAge(_ headers: HTTPFields) -> TimeInterval? {
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

    /// Fetches once at start (without delaying it), then whenever the cache expires (at least five
    /// minutes apart).
    struct Refresher: Service {
        let keySet: RemoteKeySet

        func run() async throws {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                // Shutdown does not wait for a slow identity provider.
                await cancelWhenGracefulShutdown { await keySet.refresh() }
                let wait = await keySet.secondsUntilExpiry()
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(max(300, wait))) }
                } catch { return }
            }
        }
    }
}
