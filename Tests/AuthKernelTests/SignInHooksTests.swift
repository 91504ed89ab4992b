import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization
import Testing

/// A first-factor provider that knows nothing of the hooks: `POST /api/v1/auth/hooked/sign-in`
/// with `subject` signs that subject in. Its configuration chooses which hooks the test registers
/// (as another provider would, from its own init).
struct HookedProvider: AuthProvider {
    static let id = "hooked"
    static let settings = [Setting("hooks", .strings, default: "none", "The policies and factors to register.")]
    let kernel: Kernel

    init(kernel: Kernel, config: inout ConfigSection) throws {
        self.kernel = kernel
        for hook in try config.strings("hooks", default: []) {
            switch hook {
            case "refuse": kernel.signInHooks.register(RefuseNamed(name: "mallory"))
            case "claims": kernel.signInHooks.register(TenantClaims())
            case "factor":
                kernel.signInHooks.register(DemandFactor(factors: ["word"]))
                kernel.signInHooks.register(WordFactor())
            case "unavailable": kernel.signInHooks.register(DemandFactor(factors: ["word", "unregistered"]))
            default: throw ConfigError("unknown hook \(hook)")
            }
        }
    }

    struct Body: Decodable { var subject: String }

    func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        routes.post("hooked/sign-in") { request, context -> SignInResponse in
            let body = try await request.decodeJSON(as: Body.self, context: context)
            let user = try await kernel.users.signIn(
                .init(identity: Identity(provider: Self.id, subject: body.subject), email: nil, emailVerified: false), linkingTo: nil)
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: .none)
        }
        return routes
    }
}

struct RefuseNamed: SignInPolicy {
    let name: String
    func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
        attempt.user.identities.contains { $0.subject == name }
            ? .refuse(AuthError(status: .forbidden, code: "NOT_TODAY", message: "Not today.")) : .allow
    }
}

struct TenantClaims: SignInPolicy {
    func claims(for user: UserRecord, session: SessionRecord) -> [String: JSONValue] {
        ["tenant": .string("acme"), "sub": .string("someone-else"), "amr": .array([])]
    }
}

struct DemandFactor: SignInPolicy {
    let factors: [String]
    func decide(_ attempt: SignInAttempt) async throws -> SignInDecision {
        #expect(attempt.amr == ["hooked"])
        return attempt.user.identities.contains { $0.subject.hasPrefix("2fa-") } ? .requireSecondFactor(factors) : .allow
    }
}

/// A second factor whose right answer is the word "swordfish".
struct WordFactor: SecondFactor {
    let name = "word"
    func verify(_ answer: JSONValue, for user: UserRecord, challenge: SignInChallenge) async throws -> Bool {
        answer == .string("swordfish")
    }
}

struct SignInHooksTests {
    static func harness(_ hooks: [String], clock: ManualClock = ManualClock()) async throws -> TestHarness {
        let list = hooks.map { "\"\($0)\"" }.joined(separator: ",")
        return try await TestHarness.make(providers: [HookedProvider.self], config: #"{"providers":["hooked"],"hooked":{"hooks":[\#(list)]}}"#, clock: clock)
    }

    static func signIn(_ client: HarnessClient, _ subject: String) async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/hooked/sign-in", json: ["subject": subject])
    }

    static func claims(_ token: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(token.split(separator: ".")[1]))!))) as? [String: Any] ?? [:]
    }

    @Test func aPolicyRefusesASignInWithItsOwnError() async throws {
        let h = try await Self.harness(["refuse"])
        try await h.test { client async throws in
            let refused = try await Self.signIn(client, "mallory")
            #expect(refused.status == .forbidden && refused.errorCode == "NOT_TODAY")
            #expect(try await Self.signIn(client, "alice").status == .ok)
        }
    }

    @Test func aPolicyAddsClaimsButCannotReplaceTheKernels() async throws {
        let h = try await Self.harness(["claims"])
        try await h.test { client async throws in
            let r = try await Self.signIn(client, "alice")
            let claims = Self.claims(r.accessToken!)
            #expect(claims["tenant"] as? String == "acme")
            #expect(claims["sub"] as? String != "someone-else" && claims["amr"] as? [String] == ["hooked"])
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": r.json["refresh_token"] as! String])
            #expect(Self.claims(refreshed.accessToken!)["tenant"] as? String == "acme")
        }
    }

    @Test func aSecondFactorChallengeIsAnsweredOnce() async throws {
        let h = try await Self.harness(["factor"])
        try await h.test { client async throws in
            #expect(try await Self.signIn(client, "alice").status == .ok)
            let held = try await Self.signIn(client, "2fa-bob")
            #expect(held.status == .accepted)
            #expect(held.json["status"] as? String == "second_factor_required" && held.json["factors"] as? [String] == ["word"])
            #expect(held.json["expires_in"] as? Int == 300 && held.json["access_token"] == nil)
            let challenge = try #require(held.json["challenge"] as? String)

            let wrong = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "word": "password"])
            #expect(wrong.status == .unauthorized && wrong.errorCode == "INVALID_CODE")
            #expect((wrong.json["error"] as? [String: Any])?["details"] as? [String: Int] == ["attempts_remaining": 4])

            let right = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "word": "swordfish"])
            #expect(right.status == .ok)
            #expect(Self.claims(right.accessToken!)["amr"] as? [String] == ["hooked", "word", "mfa"])
            let again = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "word": "swordfish"])
            #expect(again.status == .unauthorized && again.errorCode == "INVALID_CHALLENGE")
        }
    }

    @Test func aChallengeDiesAfterFiveWrongAnswersOrFiveMinutes() async throws {
        let clock = ManualClock()
        let h = try await Self.harness(["factor"], clock: clock)
        try await h.test { client async throws in
            let challenge = try #require(try await Self.signIn(client, "2fa-bob").json["challenge"] as? String)
            for _ in 0..<5 { _ = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "word": "no"]) }
            let dead = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "word": "swordfish"])
            #expect(dead.errorCode == "INVALID_CHALLENGE")

            let later = try #require(try await Self.signIn(client, "2fa-bob").json["challenge"] as? String)
            clock.advance(by: 301)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": later, "word": "swordfish"]).errorCode == "INVALID_CHALLENGE")
        }
    }

    @Test func badRequestsToVerify() async throws {
        let h = try await Self.harness(["factor"])
        try await h.test { client async throws in
            let challenge = try #require(try await Self.signIn(client, "2fa-bob").json["challenge"] as? String)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["word": "swordfish"]).errorCode == "INVALID_REQUEST")
            #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": "made-up", "word": "x"]).errorCode == "INVALID_CHALLENGE")
            // An answer for a factor not offered, or none at all.
            for body: [String: Any] in [["challenge": challenge, "totp": "123456"], ["challenge": challenge]] {
                let r = try await client.send(.post, "/api/v1/auth/mfa/verify", json: body)
                #expect(r.status == .badRequest && r.errorCode == "INVALID_REQUEST")
            }
            #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "word": "swordfish"]).status == .ok)
        }
    }

    @Test func wrongSecondFactorsAreLimitedPerUser() async throws {
        let h = try await Self.harness(["factor"])
        try await h.test { client async throws in
            var last: HarnessResponse?
            for _ in 0..<3 {
                let challenge = try #require(try await Self.signIn(client, "2fa-bob").json["challenge"] as? String)
                for _ in 0..<4 { last = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "word": "no"]) }
            }
            // 12 wrong answers, 10 allowed per 15 minutes.
            #expect(last?.status == .tooManyRequests)
        }
    }

    @Test func aDemandedFactorNobodyCanAnswerIsForbidden() async throws {
        let h = try await Self.harness(["unavailable"])
        try await h.test { client async throws in
            let r = try await Self.signIn(client, "2fa-bob")
            #expect(r.status == .forbidden && r.errorCode == "FORBIDDEN")
        }
    }

    @Test func aDisabledAccountIsRefusedBeforeThePolicies() async throws {
        let h = try await Self.harness(["factor"])
        try await h.test { client async throws in
            _ = try await Self.signIn(client, "2fa-bob")
            let user = try #require(try await h.kernel.users.user(identity: Identity(provider: "hooked", subject: "2fa-bob")))
            _ = try await h.kernel.users.update(user.id) { $0.disabledAt = Date() }
            let r = try await Self.signIn(client, "2fa-bob")
            #expect(r.status == .forbidden && r.errorCode == "ACCOUNT_DISABLED")
        }
    }

    @Test func sessionEndsAreReported() async throws {
        let h = try await Self.harness([])
        let ended = Mutex<[UUID]>([])
        h.kernel.events.onSessionEnd { session in ended.withLock { $0.append(session.id) } }
        try await h.test { client async throws in
            let s = try await Self.signIn(client, "alice")
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: s.accessToken).status == .noContent)
            let sid = try #require(Self.claims(s.accessToken!)["sid"] as? String)
            #expect(ended.withLock { $0.map(\.lowercased) } == [sid])
        }
    }
}
