import AuthKernel
import AuthdCore

extension AuthServer.Options {
    /// What the full server adds to the core: HTTPS with HTTP/2 (`http.tls`), APNs (`push.apns`),
    /// SMTP (`mail.transport`), outbound HTTP (webhooks, `kernel.http`) and the OpenID Provider's
    /// RS256 key, each with the libraries the core and the test kit do without.
    package mutating func addFullServerParts() {
        smtp = { settings in SMTPTransport(settings: settings) }
        http = AsyncHTTPClientOutbound.shared
        rsa = { keys, logger in try await RSASigningKeys.load(from: keys, logger: logger) }
        importUsers = { path, dryRun, store, clock, progress in
            let report = try await UserImport(store: store, clock: clock).run(path: path, dryRun: dryRun, progress: progress)
            return UserImportOutcome(text: report.text(dryRun: dryRun), imported: report.imported, refused: report.refused)
        }
        tls = { files in try TLSCertificates(files) }
        push = { settings in try await APNsClient(settings: settings) }
    }
}
