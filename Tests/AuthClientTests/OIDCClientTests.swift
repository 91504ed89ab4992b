import AuthClient
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerProcessSupport
import Testing

/// `signIn(withIDToken:provider:nonce:)` against a real `authd serve` whose `oidc.providers` names an
/// identity provider this test stands in for: its discovery document and key set served as files
/// (Python's http.server on loopback), its ID token signed here with Ed25519.
@Suite(.serialized)
struct OIDCClientTests {
    /// A folder served over HTTP on 127.0.0.1; stops when released.
    final class StaticServer: Sendable {
        let process: Process
        let port: Int
        init(folder: String) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            var text = ""
            // Its first line: "Serving HTTP on 127.0.0.1 port 43567 (http://127.0.0.1:43567/) ...".
            while !text.hasSuffix("\n"), let chunk = try out.fileHandleForReading.read(upToCount: 1), !chunk.isEmpty {
                text += String(decoding: chunk, as: UTF8.self)
            }
            guard let match = text.firstMatch(of: /port (\d+)/), let port = Int(match.1) else { throw E2EError("http.server said: \(text)") }
            self.process = process
            self.port = port
        }
        deinit { process.terminate() }
    }

    static func b64(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test func anIDTokenSignsInOnceAndTheAnswersAreTheClientsErrors() async throws {
        let key = Curve25519.Signing.PrivateKey()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("authd-idp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/.well-known", withIntermediateDirectories: true)
        let idp = try StaticServer(folder: folder)
        let issuer = "http://127.0.0.1:\(idp.port)"
        try #"{"issuer":"\#(issuer)","jwks_uri":"\#(issuer)/jwks.json"}"#.write(toFile: folder + "/.well-known/openid-configuration", atomically: true, encoding: .utf8)
        try #"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"\#(Self.b64(key.publicKey.rawRepresentation))"}]}"#
            .write(toFile: folder + "/jwks.json", atomically: true, encoding: .utf8)
        let downstream = try AuthClientTests.Fixture(config: #"""
            {"mail":{"transport":"outbox"},"providers":["email","oidc"],
             "oidc":{"providers":{"idp":{"issuer":"\#(issuer)","client_id":"the-app"}}}}
            """#)

        func idToken(nonce: String) throws -> String {
            let now = Int(Date().timeIntervalSince1970)
            let header = Self.b64(#"{"alg":"EdDSA","kid":"k1","typ":"JWT"}"#.utf8)
            let claims = #"{"iss":"\#(issuer)","aud":"the-app","sub":"person-1","iat":\#(now),"exp":\#(now + 300),"nonce":"\#(nonce)"}"#
            let input = header + "." + Self.b64(claims.utf8)
            return input + "." + Self.b64(try key.signature(for: Data(input.utf8)))
        }

        let app = downstream.client()
        let token = try idToken(nonce: "raw-nonce")
        let session = try await app.signIn(withIDToken: token, provider: "idp", nonce: "raw-nonce", deviceName: "Anna's phone")
        #expect(try await app.me().id == session.user.id && session.user.authProviders.contains("idp"))
        #expect(try SignInApprovalClientTests.amr(session.tokens.accessToken) == ["oidc"])

        let other = downstream.client()
        await #expect(throws: AuthClientError.invalidIDToken, "accepted once") {
            try await other.signIn(withIDToken: token, provider: "idp", nonce: "raw-nonce")
        }
        await #expect(throws: AuthClientError.invalidIDToken, "another nonce") {
            try await other.signIn(withIDToken: try idToken(nonce: "nonce-\(UUID().uuidString)"), provider: "idp", nonce: "not it")
        }
        await #expect(throws: AuthClientError.notFound) { try await other.signIn(withIDToken: token, provider: "nobody", nonce: nil) }
        // The next sign-in of the same person is the same account.
        let again = try await other.signIn(withIDToken: try idToken(nonce: "n2"), provider: "idp", nonce: "n2")
        #expect(again.user.id == session.user.id)
    }
}
