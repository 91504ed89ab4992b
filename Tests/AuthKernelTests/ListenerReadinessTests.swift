@testable import AuthdCore
@testable import AuthdServer
@testable import AuthKernel
import Synchronization
import Testing

struct ListenerReadinessTests {
    /// What `announce` was called with, in order.
    final class Announcements: Sendable {
        let urls = Mutex<[String]>([])
    }

    @Test func announcesOnceWhenTheLastListenerReportsWithTheAPIsURL() async throws {
        let seen = Announcements()
        let readiness = ListenerReadiness { url in seen.urls.withLock { $0.append(url) } }
        for _ in 0..<3 { readiness.expect() }  // the API, metrics, admin
        await readiness.listening(apiURL: "http://127.0.0.1:8080")
        #expect(seen.urls.withLock { $0 }.isEmpty)
        await readiness.listening()
        #expect(seen.urls.withLock { $0 }.isEmpty)
        await readiness.listening()
        #expect(seen.urls.withLock { $0 } == ["http://127.0.0.1:8080"])
    }

    @Test func theAPIMayBeTheLastToListen() async throws {
        let seen = Announcements()
        let readiness = ListenerReadiness { url in seen.urls.withLock { $0.append(url) } }
        readiness.expect()
        readiness.expect()
        await readiness.listening()
        #expect(seen.urls.withLock { $0 }.isEmpty)
        await readiness.listening(apiURL: "http://[::1]:9000")
        #expect(seen.urls.withLock { $0 } == ["http://[::1]:9000"])
    }
}
