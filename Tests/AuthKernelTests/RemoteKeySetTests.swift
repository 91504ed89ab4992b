import AuthKernel
import Foundation
import HTTPTypes
import Logging
import Synchronization
import Testing

/// The SDK's cached key set, against a stand-in identity provider whose answers the test sets and
/// whose fetches it counts; time is the manual clock's.
struct RemoteKeySetTests {
    final class StandIn: OutboundHTTP {
        struct State {
            var kids = ["k1"]
            var maxAge: Int?
            var status = HTTPResponse.Status.ok
            var body: String?
            var requests = 0
        }
        let state = Mutex(State())

        func send(_ request: OutboundRequest) async throws -> OutboundResponse {
            let (kids, maxAge, status, body) = state.withLock { s in
                s.requests += 1
                return (s.kids, s.maxAge, s.status, s.body)
            }
            var headers = HTTPFields()
            if let maxAge { headers[.cacheControl] = "public, max-age=\(maxAge)" }
            let json = body ?? #"{"keys":[\#(kids.map { #"{"kty":"OKP","kid":"\#($0)"}"# }.joined(separator: ","))]}"#
            return OutboundResponse(status: status, headers: headers, body: Array(json.utf8))
        }
    }

    static func keySet(_ http: StandIn, _ clock: ManualClock, validate: @escaping @Sendable (String) async throws -> Void = { _ in }) -> RemoteKeySet {
        RemoteKeySet(
            name: "Test IdP", url: "https://idp.example/jwks", refetchInterval: 60, http: http, clock: clock, logger: Logger(label: "test"),
            validate: validate)
    }

    @Test func aKnownKidIsServedFromTheCacheUntilMaxAge() async throws {
        let http = StandIn(), clock = ManualClock()
        http.state.withLock { $0.maxAge = 600 }
        let keys = Self.keySet(http, clock)
        #expect(try await keys.keys(for: "k1").kids == ["k1"])
        #expect(try await keys.keys(for: "k1").generation == 1)
        #expect(await keys.fetches == 1)
        clock.advance(by: 601)
        #expect(try await keys.keys(for: "k1").generation == 2)
        #expect(await keys.fetches == 2)
        // Without max-age, a day.
        http.state.withLock { $0.maxAge = nil }
        clock.advance(by: 601)
        _ = try await keys.keys(for: "k1")
        clock.advance(by: 86_000)
        _ = try await keys.keys(for: "k1")
        #expect(await keys.fetches == 3)
    }

    @Test func anUnknownKidRefetchesAtMostOncePerInterval() async throws {
        let http = StandIn(), clock = ManualClock()
        let keys = Self.keySet(http, clock)
        _ = try await keys.keys(for: "k1")
        for _ in 0..<5 { await #expect(throws: RemoteKeySet.Failure.unknownKid("made-up")) { try await keys.keys(for: "made-up") } }
        #expect(http.state.withLock { $0.requests } == 1)
        // A rotated key appears; once the interval has passed, the first token naming it refetches.
        http.state.withLock { $0.kids = ["k1", "k2"] }
        clock.advance(by: 60)
        #expect(try await keys.keys(for: "k2").kids == ["k1", "k2"])
        #expect(http.state.withLock { $0.requests } == 2)
    }

    @Test func aFailedOrRefusedFetchKeepsTheCachedKeys() async throws {
        let http = StandIn(), clock = ManualClock()
        http.state.withLock { $0.maxAge = 10 }
        let keys = Self.keySet(http, clock, validate: { json in
            if json.contains("unreadable") { throw CocoaError(.coderReadCorrupt) }
        })
        _ = try await keys.keys(for: "k1")
        http.state.withLock { $0.status = .serviceUnavailable }
        clock.advance(by: 100)
        #expect(try await keys.keys(for: "k1").generation == 1)
        http.state.withLock { ($0.status, $0.body) = (.ok, #"{"keys":[{"kid":"k9","unreadable":true}]}"#) }
        clock.advance(by: 100)
        #expect(try await keys.keys(for: "k1").generation == 1)
        http.state.withLock { $0.body = "not json" }
        clock.advance(by: 100)
        #expect(try await keys.keys(for: "k1").generation == 1)
        #expect(await keys.fetches == 1)
        #expect(http.state.withLock { $0.requests } == 4)
    }

    @Test func concurrentCallersShareOneFetch() async throws {
        let http = StandIn(), clock = ManualClock()
        let keys = Self.keySet(http, clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { _ = try await keys.keys(for: "k1") } }
            try await group.waitForAll()
        }
        #expect(http.state.withLock { $0.requests } == 1)
    }

    @Test func maxAgeIsReadFromCacheControl() {
        #expect(RemoteKeySet.maxAge([.cacheControl: "public, max-age=3600, must-revalidate"]) == 3600)
        #expect(RemoteKeySet.maxAge([.cacheControl: "no-store"]) == nil)
        #expect(RemoteKeySet.maxAge([:]) == nil)
    }
}
