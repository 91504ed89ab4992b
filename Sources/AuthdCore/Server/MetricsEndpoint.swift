import AuthKernel
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `GET /metrics` in Prometheus text format on its own listener (`metrics.listen`), so the operator
/// decides who can reach it, apart from the public API.
enum MetricsEndpoint {
    /// - Parameter onRunning: called once the listener accepts connections.
    static func service(
        host: String, port: Int, exposition: @escaping @Sendable () -> [UInt8], logger: Logger, onRunning: @escaping @Sendable () async -> Void
    ) -> any Service {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: exposition()))
            )
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "authd-metrics"),
            onServerRunning: { channel in
                logger.info("metrics served", metadata: ["url": "http://\(host):\(channel.localAddress?.port ?? port)/metrics"])
                await onRunning()
            },
            logger: logger
        )
    }
}
