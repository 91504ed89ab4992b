import AuthKernel
import AuthdCore

extension AuthServer.Options {
    /// What the full server adds to the core: HTTPS with HTTP/2 (`http.tls`) and APNs (`push.apns`).
    package mutating func addFullServerParts() {
        tls = { files in try TLSCertificates(files) }
        push = { settings in try await APNsClient(settings: settings) }
    }
}
