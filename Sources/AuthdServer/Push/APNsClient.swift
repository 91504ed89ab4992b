import AsyncHTTPClient
import AuthKernel
import AuthdCore
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import NIOSSL

/// Sends alerts to APNs over HTTP/2 with token-based authentication: an ES256 provider token
/// (`iss` the team id, `kid` the key id), made again every 40 minutes as Apple asks (between 20 and 60).
actor APNsClient: PushDelivery {
    let settings: PushSettings.APNs
    private let keys: JWTKeyCollection
    private let client: HTTPClient
    private var token: (value: String, madeAt: Date)?

    struct ProviderClaims: JWTPayload {
        var iss: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// - Throws: when the key is not an EC P-256 private key, or `ca_file` cannot be read.
    init(settings: PushSettings.APNs) async throws {
        self.settings = settings
        keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: settings.privateKeyPEM), kid: JWKIdentifier(string: settings.keyID))
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = settings.caFile {
            tls.additionalTrustRoots = [.file(caFile)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic  // HTTP/2 by ALPN, which APNs requires
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(15))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async {
        try? await client.shutdown()
    }

    private func providerToken(now: Date) async throws -> String {
        if let token, now.timeIntervalSince(token.madeAt) < 40 * 60 { return token.value }
        let value = try await keys.sign(ProviderClaims(iss: settings.teamID, iat: Int(now.timeIntervalSince1970)), kid: JWKIdentifier(string: settings.keyID))
        token = (value, now)
        return value
    }

    /// Sends `payload` (JSON) to `deviceToken` for `topic`, expiring at `expiration`.
    func send(deviceToken: String, environment: String, topic: String, payload: [UInt8], expiration: Date, now: Date) async -> PushOutcome {
        let host = settings.endpoint ?? (environment == "sandbox" ? "https://api.sandbox.push.apple.com" : "https://api.push.apple.com")
        var request = HTTPClientRequest(url: host + "/3/device/" + deviceToken)
        request.method = .POST
        do {
            request.headers.add(name: "authorization", value: "bearer " + (try await providerToken(now: now)))
        } catch {
            return .failed("could not sign the provider token: \(error)")
        }
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-expiration", value: String(Int(expiration.timeIntervalSince1970)))
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: payload))
        do {
            let response = try await client.execute(request, timeout: .seconds(15))
            let body = try await response.body.collect(upTo: 4096)
            let reason = (try? JSONDecoder().decode([String: String].self, from: Data(body.readableBytesView)))?["reason"] ?? ""
            switch response.status.code {
            case 200: return .sent
            case 410: return .gone
            case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic": return .gone
            default: return .failed("APNs answered \(response.status.code) \(LogSafe.text(reason, maxLength: 64))")
            }
        } catch {
            return .failed("\(error)")
        }
    }
}

// It holds the APNs key: a log line or a `dump` shows its name only (contract §17).
extension APNsClient: RedactedDescription {}
