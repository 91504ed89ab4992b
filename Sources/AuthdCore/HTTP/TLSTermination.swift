package import HummingbirdCore

/// `http.tls`: serving HTTPS itself. The full server (`AuthdServer`) provides it with NIOSSL and
/// HTTP/2; the core and the test kit, built without TLS, refuse a configuration that asks for it.
package protocol TLSTermination: Sendable {
    /// The listener: HTTPS, HTTP/2 offered by ALPN, each connection or stream given `http1`'s handlers.
    func server(idleTimeout: Int, http1: HTTP1Channel.Configuration) throws -> HTTPServerBuilder
    /// Reads the certificate and key again (SIGHUP); on any error the old ones stay.
    func reload() throws
}
