import AuthKernel
import NIOCore
import Synchronization

/// `http.max_connections_per_client`: connections one client network (an IPv4 address or an IPv6
/// /64) may hold at once, so that one host cannot fill `http.max_connections` and stop everyone
/// else's accepts. A connection past it is closed at once. Connections from a trusted proxy are not
/// counted (every client behind it would share its address).
final class ConnectionsPerClient: Sendable {
    private let open = Mutex<[String: Int]>([:])
    let limit: Int
    let proxies: TrustedProxies

    init(limit: Int, proxies: TrustedProxies) {
        self.limit = limit
        self.proxies = proxies
    }

    /// Counts a new connection from `address`; false when it is one too many (it is not counted).
    func admit(_ address: String) -> Bool {
        guard !proxies.contains(address) else { return true }
        let key = ClientNetwork.key(for: address)
        return open.withLock { open in
            guard open[key, default: 0] < limit else { return false }
            open[key, default: 0] += 1
            return true
        }
    }

    /// Forgets a connection ``admit(_:)`` counted.
    func release(_ address: String) {
        guard !proxies.contains(address) else { return }
        let key = ClientNetwork.key(for: address)
        open.withLock { open in
            let left = open[key, default: 1] - 1
            open[key] = left > 0 ? left : nil
        }
    }

    /// The handler that counts one connection.
    func handler() -> Handler { Handler(counter: self) }

    /// Counts its connection while it is open; closes it at once when its client has too many.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        private let counter: ConnectionsPerClient
        private var counted: String?

        init(counter: ConnectionsPerClient) { self.counter = counter }

        func handlerAdded(context: ChannelHandlerContext) {
            guard let address = context.channel.remoteAddress?.ipAddress else { return }
            if counter.admit(address) {
                counted = address
            } else {
                context.close(promise: nil)
            }
        }

        func handlerRemoved(context: ChannelHandlerContext) { release() }

        func channelInactive(context: ChannelHandlerContext) {
            release()
            context.fireChannelInactive()
        }

        private func release() {
            guard let address = counted else { return }
            counted = nil
            counter.release(address)
        }
    }
}
