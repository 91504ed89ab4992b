import AuthKernel
import AuthKernelTesting
import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import Logging
import JWTKit
import NIOCore
import Synchronization

/// A stand-in for Apple on 127.0.0.1: serves a JWKS of keys the test made (counting fetches), and
/// token and revoke endpoints that check the client-secret JWT with the app key's public half.
final class FakeApple: Sendable {
    struct State {
        var jwks = #"{"keys":[]}"#
        var jwksFetches = 0
        var jwksFails = false
        var cacheControl: String?
        var exchanges: [String] = []
        var revoked: [String] = []
        var failRevokes = 0
        var badSecrets = 0
        /// `auth/held-keys`: requests that arrived, answers finished, and whether the test let them finish.
        var heldArrived = 0
        var heldAnswered = 0
        var heldReleased = false
    }
    let state = Mutex(State())
    let appKey = ES256PrivateKey()
    static let teamID = "TEAM123456", keyID = "KEY1234567", clientID = "com.example.app"
    private let port = Mutex<Int?>(nil)
    private let task = Mutex<Task<Void, any Error>?>(nil)

    var baseURL: String { "http://127.0.0.1:\(port.withLock { $0 } ?? 0)" }

    struct ClientSecret: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    func start() async throws {
        let router = Router()
        router.get("auth/keys") { _, _ -> Response in
            let (body, fail, cache) = self.state.withLock { s -> (String, Bool, String?) in
                s.jwksFetches += 1
                return (s.jwks, s.jwksFails, s.cacheControl)
            }
            if fail { return Response(status: .internalServerError) }
            var headers: HTTPFields = [.contentType: "application/json"]
            if let cache { headers[.cacheControl] = cache }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        // An Apple that does not finish answering until the test releases it: the status line comes at
        // once, then a space a second (JSON allows it, and it keeps the client's read timeout away), so
        // whether the fetch is still going depends on the test alone, not on how long anything took.
        // After two minutes it finishes anyway, so a server that waited for it is caught instead of hung.
        router.get("auth/held-keys") { _, _ -> Response in
            self.state.withLock { $0.heldArrived += 1 }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: " "))
                for _ in 0..<120 where !self.state.withLock({ $0.heldReleased }) {
                    try await Task.sleep(for: .seconds(1))
                    try await writer.write(ByteBuffer(string: " "))
                }
                try await writer.write(ByteBuffer(string: #"{"keys":[]}"#))
                self.state.withLock { $0.heldAnswered += 1 }
                try await writer.finish(nil)
            })
        }
        router.post("auth/token") { request, _ -> Response in
            let form = try await Self.form(request)
            guard try await self.checkSecret(form["client_secret"]), form["grant_type"] == "authorization_code", let code = form["code"] else {
                return Response(status: .badRequest, body: .init(byteBuffer: ByteBuffer(string: #"{"error":"invalid_client"}"#)))
            }
            self.state.withLock { $0.exchanges.append(code) }
            let json = #"{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"apple-refresh-for-\#(code)","id_token":"x"}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        router.post("auth/revoke") { request, _ -> Response in
            let form = try await Self.form(request)
            guard try await self.checkSecret(form["client_secret"]), let token = form["token"] else { return Response(status: .badRequest) }
            let fail = self.state.withLock { s -> Bool in
                if s.failRevokes > 0 { s.failRevokes -= 1; return true }
                s.revoked.append(token)
                return false
            }
            return Response(status: fail ? .serviceUnavailable : .ok)
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) },
            logger: { var l = Logger(label: "fake-apple"); l.logLevel = .critical; return l }()
        )
        task.withLock { $0 = Task { try await app.runService(gracefulShutdownSignals: []) } }
        for await p in stream {
            port.withLock { $0 = p }
            break
        }
    }

    func stop() { task.withLock { $0?.cancel() } }

    func checkSecret(_ secret: String?) async throws -> Bool {
        guard let secret else { return false }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: appKey.publicKey, kid: JWKIdentifier(string: Self.keyID))
        guard let claims = try? await keys.verify(secret, as: ClientSecret.self),
            claims.iss == Self.teamID, claims.sub == Self.clientID, claims.aud == "https://appleid.apple.com", claims.exp > claims.iat,
            claims.exp - claims.iat <= 15_777_000
        else {
            state.withLock { $0.badSecrets += 1 }
            return false
        }
        return true
    }

    static func form(_ request: Request) async throws -> [String: String] {
        let body = String(buffer: try await request.body.collect(upTo: 65536))
        var out: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if kv.count == 2 { out[kv[0]] = kv[1] }
        }
        return out
    }

    /// Writes the app's .p8 key to a file and returns its path.
    func writeAppKey() throws -> String {
        let path = temporaryFolder() + "/AuthKey_TEST.p8"
        try appKey.pemRepresentation.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }
}

/// An RSA key pair that signs identity tokens as Apple would.
struct AppleSigningKey: Sendable {
    let kid: String
    let privateKey: JWTKit.Insecure.RSA.PrivateKey

    init(kid: String) throws {
        self.kid = kid
        privateKey = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The public JWK as Apple publishes it.
    func jwk() throws -> String {
        let (n, e) = try privateKey.publicKey.getKeyPrimitives()
        return #"{"kty":"RSA","kid":"\#(kid)","use":"sig","alg":"RS256","n":"\#(Self.b64url(n))","e":"\#(Self.b64url(e))"}"#
    }

    static func jwks(_ keys: [AppleSigningKey]) throws -> String {
        #"{"keys":[\#(try keys.map { try $0.jwk() }.joined(separator: ","))]}"#
    }

    static func b64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A signed token with these claims; `alg` RS256 unless another digest is asked for, `kid` this key's unless overridden.
    func sign(_ claims: [String: JSONValue], digest: DigestAlgorithm = .sha256, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(rsa: privateKey, digestAlgorithm: digest, kid: JWKIdentifier(string: kid ?? self.kid))
        return try await keys.sign(RawClaims(claims), kid: JWKIdentifier(string: kid ?? self.kid))
    }
}

/// Any JSON object as a JWT payload.
struct RawClaims: JWTPayload {
    let claims: [String: JSONValue]
    init(_ claims: [String: JSONValue]) { self.claims = claims }
    init(from decoder: any Decoder) throws { claims = try [String: JSONValue](from: decoder) }
    func encode(to encoder: any Encoder) throws { try claims.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) throws {}
}
