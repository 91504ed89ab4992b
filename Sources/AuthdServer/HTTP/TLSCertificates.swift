import AuthKernel
import AuthdCore
import HummingbirdCore
import HummingbirdHTTP2
import NIOCore
import NIOSSL
import Synchronization

/// `http.tls`: the certificate and key authd serves HTTPS with (TLS 1.2 and later, HTTP/2 offered by
/// ALPN). SIGHUP reads the files again: each new handshake gets the newest certificate and key through
/// NIOSSL's per-hello callback, while connections already open keep theirs.
final class TLSCertificates: TLSTermination {
    let files: AuthConfig.TLSFiles
    private let current: Mutex<NIOSSLContextConfigurationOverride>

    init(_ files: AuthConfig.TLSFiles) throws {
        self.files = files
        current = Mutex(try Self.read(files))
    }

    /// The chain and key in the files now.
    static func read(_ files: AuthConfig.TLSFiles) throws -> NIOSSLContextConfigurationOverride {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificateFile)
            key = try NIOSSLPrivateKey(file: files.keyFile, format: .pem)
        } catch {
            throw ConfigError("http.tls: cannot read a PEM certificate chain from \(files.certificateFile) and its key from \(files.keyFile): \(error)")
        }
        guard !chain.isEmpty else { throw ConfigError("http.tls.cert_file holds no certificate") }
        // A key that does not match the certificate fails here, not at the first handshake.
        _ = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
        var override = NIOSSLContextConfigurationOverride()
        override.certificateChain = chain.map { .certificate($0) }
        override.privateKey = .privateKey(key)
        return override
    }

    /// The server's configuration: TLS 1.2+, and a callback that hands every new handshake the newest
    /// chain and key.
    func serverConfiguration() -> TLSConfiguration {
        let now = current.withLock { $0 }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: now.certificateChain ?? [], privateKey: now.privateKey!)
        configuration.minimumTLSVersion = .tlsv12
        configuration.sslContextCallback = { [self] _, promise in promise.succeed(self.current.withLock { $0 }) }
        return configuration
    }

    func server(idleTimeout: Int, http1: HTTP1Channel.Configuration) throws -> HTTPServerBuilder {
        // HTTP/1.1 connections get the same handlers, HTTP/2 streams each get them.
        try .http2Upgrade(
            tlsConfiguration: serverConfiguration(), configuration: .init(idleTimeout: .seconds(Int64(idleTimeout)), streamConfiguration: http1))
    }

    /// Reads the files again (SIGHUP); on any error the old certificate stays.
    func reload() throws {
        let fresh = try Self.read(files)
        current.withLock { $0 = fresh }
    }
}

// It holds the TLS private key: a log line or a `dump` shows its name only (contract §17).
extension TLSCertificates: RedactedDescription {}
