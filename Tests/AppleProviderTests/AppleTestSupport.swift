import AppleProvider
import AuthKernel
import AuthdServer
import AuthKernelTesting
import Foundation
import Synchronization

/// A harness with the apple provider pointed at a ``FakeApple``.
struct AppleTest {
    let apple: FakeApple
    let key: AppleSigningKey
    let h: TestHarness
    static let audience = "com.example.app"

    static func make(revocation: Bool = false, tokenURL: String? = nil, signup: String? = nil) async throws -> AppleTest {
        let apple = FakeApple()
        try await apple.start()
        let key = try AppleSigningKey(kid: "apple-key-1")
        let jwks = try AppleSigningKey.jwks([key])
        apple.state.withLock { $0.jwks = jwks }
        var section = #""audiences":["\#(audience)"],"jwks_url":"\#(apple.baseURL)/auth/keys""#
        if revocation {
            section += #","team_id":"\#(FakeApple.teamID)","key_id":"\#(FakeApple.keyID)","client_id":"\#(FakeApple.clientID)","#
            section += #""private_key_path":"\#(try apple.writeAppKey())","token_url":"\#(apple.baseURL)/auth/\#(tokenURL ?? "token")","revoke_url":"\#(apple.baseURL)/auth/revoke""#
        }
        let config = #"{"providers":["apple"],"apple":{\#(section)}\#(signup.map { #","signup":\#($0)"# } ?? "")}"#
        let h = try await TestHarness.make(providers: [AppleProvider.self], config: config, http: AsyncHTTPClientOutbound.shared)
        return AppleTest(apple: apple, key: key, h: h)
    }

    /// Claims of a genuine token, at the harness clock's time; `changes` override or (with .null) remove.
    func claims(_ changes: [String: JSONValue] = [:]) -> [String: JSONValue] {
        let now = Int(h.clock.now().timeIntervalSince1970)
        var c: [String: JSONValue] = [
            "iss": .string("https://appleid.apple.com"), "aud": .string(Self.audience), "sub": .string("001234.apple.user"),
            "iat": .number(Double(now)), "exp": .number(Double(now + 600)), "email": .string("apple@example.com"),
            "email_verified": .bool(true),
        ]
        for (k, v) in changes { if v == .null { c[k] = nil } else { c[k] = v } }
        return c
    }

    func token(_ changes: [String: JSONValue] = [:]) async throws -> String {
        try await key.sign(claims(changes))
    }

    static func hexSHA256(_ s: String) -> String { Hex.encode(SHA256.hash(s)) }
}
