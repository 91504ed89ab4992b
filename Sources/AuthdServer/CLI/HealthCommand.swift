import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `authd health`: one line and exit 0 when the server answers `GET /health`, 1 otherwise; a
/// container's healthcheck (contract §14). It asks the address `authd serve` would listen on (the
/// same flags and `AUTHD_HOST`/`AUTHD_PORT`), or `--url`.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 when the server answers GET /health, 1 otherwise (a container's healthcheck).",
        discussion: """
            Asks http://HOST:PORT/health, as `authd serve` listens (--host, --port, AUTHD_HOST,
            AUTHD_PORT; 127.0.0.1:8080 by default; a server listening on 0.0.0.0 or :: is asked on
            loopback). With `http.tls`, give the address: --url https://auth.example.com/health.
            """
    )

    @Option(help: "Address the server listens on. Default AUTHD_HOST or 127.0.0.1.") var host: String?
    @Option(help: "Port the server listens on. Default AUTHD_PORT or 8080.") var port: Int?
    @Option(help: "The whole address to ask instead (http or https).") var url: String?
    @Option(help: "Seconds to wait for the answer.") var timeout: Int = 5

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        var address = url
        if address == nil {
            var host = self.host ?? env["AUTHD_HOST"] ?? "127.0.0.1"
            if host == "0.0.0.0" || host == "::" || host.isEmpty { host = "127.0.0.1" }
            // A non-numeric AUTHD_PORT (Kubernetes' tcp://…) is ignored, as `authd serve` ignores it.
            let portText = port.map(String.init) ?? env["AUTHD_PORT"].flatMap { Int($0) == nil ? nil : $0 } ?? "8080"
            guard let port = Int(portText), (1...65_535).contains(port) else {
                print("authd health: the port must be a number from 1 to 65535, not \"\(portText)\"")
                throw ExitCode(1)
            }
            address = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/health"
        }
        guard let address, address.hasPrefix("http://") || address.hasPrefix("https://"), (1...60).contains(timeout) else {
            print("authd health: --url is an http(s) address, --timeout 1 to 60 seconds")
            throw ExitCode(1)
        }
        do {
            var request = HTTPClientRequest(url: address)
            request.method = .GET
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(timeout)))
            let body = try await response.body.collect(upTo: 4096)
            guard response.status == .ok else {
                print("authd health: \(address) answered \(response.status.code)")
                throw ExitCode(1)
            }
            print("ok: \(address) answered \(String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines).prefix(200))")
        } catch let exit as ExitCode {
            throw exit
        } catch {
            print("authd health: no answer from \(address): \(error)")
            throw ExitCode(1)
        }
    }
}
