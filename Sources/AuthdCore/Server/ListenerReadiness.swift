import AuthKernel
import Synchronization

/// Announces the server once every listener it opens accepts connections: the API, and the metrics
/// and admin listeners when configured. Each listener is a service of its own and binds in its own
/// time; announcing on the API alone let a client that waited for the announcement find the metrics
/// port or the admin socket not there yet.
final class ListenerReadiness: Sendable {
    private struct State {
        var waiting = 0
        var apiURL: String?
    }

    private let state = Mutex(State())
    private let announce: @Sendable (_ url: String) async -> Void

    /// - Parameter announce: called once, with the API's URL, when the last listener reports.
    init(announce: @escaping @Sendable (_ url: String) async -> Void) {
        self.announce = announce
    }

    /// Counts one more listener to wait for; call for each before the services run.
    func expect() {
        state.withLock { $0.waiting += 1 }
    }

    /// One listener accepts connections; the API's passes its URL.
    func listening(apiURL url: String? = nil) async {
        let ready = state.withLock { s -> String? in
            if let url { s.apiURL = url }
            s.waiting -= 1
            return s.waiting == 0 ? s.apiURL : nil
        }
        if let ready { await announce(ready) }
    }
}
