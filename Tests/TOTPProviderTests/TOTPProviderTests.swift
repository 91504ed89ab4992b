@testable import TOTPProvider
import AuthKernel
import AuthdCore
import AuthKernelTesting
import EmailProvider
import Foundation
import HTTPTypes
import PasswordProvider
import Testing

/// TOTP and recovery codes (contract §10), through the HTTP routes with a manual clock.
struct TOTPProviderTests {
    static let config = #"{"mail":{"transport":"outbox"},"providers":["email","password","totp"],"totp":{"issuer":"Photo Sync"}}"#
    static let password = "correct horse battery"
    /// For tests that sign one user in with a password more often than `login_per_email` allows.
    static let manyLogins = #"{"mail":{"transport":"outbox"},"providers":["email","password","totp"],"password":{"login_per_email":{"limit":100,"window":300},"login_per_ip":{"limit":100,"window":60}}}"#

    func harness(folder: String? = nil, clock: ManualClock = ManualClock(), config: String = Self.config) async throws -> TestHarness {
        try await TestHarness.make(providers: [EmailProvider.self, PasswordProvider.self, TOTPProvider.self], config: config, folder: folder, clock: clock)
    }

    /// A registered, verified password user's session (fresh).
    func registered(_ client: HarnessClient, _ h: TestHarness, email: String = "ada@example.com") async throws -> SessionResponse {
        let r = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": email, "password": Self.password])
        #expect(r.status == .accepted)
        let code = try h.mail(to: email).last { $0.code != nil }?.code ?? ""
        return try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": email, "code": code, "password": Self.password])
            .decode(SessionResponse.self)
    }

    /// Enrols and confirms TOTP: the secret and the recovery codes.
    func enrolled(_ client: HarnessClient, _ h: TestHarness, _ s: SessionResponse) async throws -> (secret: [UInt8], codes: [String]) {
        let enroll = try await client.send(.post, "/api/v1/auth/mfa/totp/enroll", bearer: s.accessToken)
        #expect(enroll.status == .ok)
        let secretText = try #require(enroll.json["secret"] as? String)
        let secret = try #require(Self.base32Decode(secretText))
        let confirm = try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": code(secret, h)], bearer: s.accessToken)
        #expect(confirm.status == .ok)
        return (secret, try #require(confirm.json["recovery_codes"] as? [String]))
    }

    func code(_ secret: [UInt8], _ h: TestHarness, steps: Int64 = 0) -> String {
        TOTPCode.code(secret: secret, step: TOTPCode.step(at: h.clock.now()) + steps)
    }

    /// Waits (up to a minute, generous for a loaded machine) for the notice that TOTP was added, which is mailed after the answer.
    func noticeArrives(_ h: TestHarness) async throws -> Bool {
        for _ in 0..<6000 {
            if try h.mail().contains(where: { $0.text.contains("an authenticator app (TOTP)") }) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func login(_ client: HarnessClient, _ email: String = "ada@example.com") async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/password/login", json: ["email": email, "password": Self.password])
    }

    func verify(_ client: HarnessClient, _ challenge: String, _ field: String, _ answer: String) async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, field: answer])
    }

    static func base32Decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = [], buffer: UInt32 = 0, bits = 0
        for c in text.utf8 {
            guard let v = Base32.alphabet.firstIndex(of: c) else { return nil }
            buffer = (buffer << 5) | UInt32(v)
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return out
    }

    static func amr(_ token: String) throws -> [String] {
        let claims = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(token.split(separator: ".")[1])!)) as? [String: Any]
        return claims?["amr"] as? [String] ?? []
    }

    @Test func rfc6238VectorsAndBase32() {
        let secret = Array("12345678901234567890".utf8)
        // RFC 6238 appendix B (SHA-1), the last six of its eight digits.
        for (time, expected) in [(59.0, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"), (2_000_000_000, "279037"), (20_000_000_000, "353130")] {
            #expect(TOTPCode.code(secret: secret, step: TOTPCode.step(at: Date(timeIntervalSince1970: time))) == expected)
        }
        // RFC 4648 §10, without padding.
        for (text, expected) in [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI")] {
            #expect(Base32.encode(Array(text.utf8)) == expected)
        }
    }

    @Test func enrolSignInWithACodeOnceAndWithARecoveryCodeOnce() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let enroll = try await client.send(.post, "/api/v1/auth/mfa/totp/enroll", bearer: s.accessToken)
            let secretText = try #require(enroll.json["secret"] as? String)
            let uri = try #require(enroll.json["otpauth_uri"] as? String)
            #expect(uri == "otpauth://totp/Photo%20Sync:ada@example.com?secret=\(secretText)&issuer=Photo%20Sync&algorithm=SHA1&digits=6&period=30")
            // Not on until confirmed: a sign-in is not challenged yet.
            #expect(try await login(client).status == .ok)
            let secret = try #require(Self.base32Decode(secretText))
            #expect(secret.count == 20)
            let confirm = try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": code(secret, h)], bearer: s.accessToken)
            let codes = try #require(confirm.json["recovery_codes"] as? [String])
            #expect(codes.count == 10 && Set(codes).count == 10 && codes.allSatisfy { $0.count == 11 && $0.dropFirst(5).first == "-" })
            // The owner hears of it (mailed after the answer).
            #expect(try await noticeArrives(h))

            let mfa = try await client.send(.get, "/api/v1/auth/mfa", bearer: s.accessToken)
            #expect((mfa.json["factors"] as? [[String: Any]])?.map { $0["type"] as? String } == ["totp"])
            #expect(mfa.json["recovery_codes_left"] as? Int == 10)

            // The code that confirmed is used: the next sign-in needs the next step's.
            let first = try await login(client)
            #expect(first.status == .accepted && first.json["status"] as? String == "second_factor_required")
            #expect(first.json["factors"] as? [String] == ["totp", "recovery_code"] && first.json["expires_in"] as? Int == 300)
            let challenge = try #require(first.json["challenge"] as? String)
            let replay = try await verify(client, challenge, "totp", code(secret, h))
            #expect(replay.errorCode == "INVALID_CODE")
            h.clock.advance(by: 30)
            let session = try await verify(client, challenge, "totp", code(secret, h)).decode(SessionResponse.self)
            #expect(try Self.amr(session.accessToken) == ["password", "totp", "mfa"])
            // A refresh keeps both factors.
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", json: ["refresh_token": session.refreshToken]).decode(SessionResponse.self)
            #expect(try Self.amr(refreshed.accessToken) == ["password", "totp", "mfa"])
            // The challenge is single use.
            #expect(try await verify(client, challenge, "totp", code(secret, h, steps: 1)).errorCode == "INVALID_CHALLENGE")

            // A recovery code, typed loosely, works once.
            let second = try #require(try await login(client).json["challenge"] as? String)
            let loose = codes[3].lowercased().replacingOccurrences(of: "-", with: " ")
            let byCode = try await verify(client, second, "recovery_code", loose).decode(SessionResponse.self)
            #expect(try Self.amr(byCode.accessToken) == ["password", "recovery_code", "mfa"])
            let third = try #require(try await login(client).json["challenge"] as? String)
            #expect(try await verify(client, third, "recovery_code", codes[3]).errorCode == "INVALID_CODE")
            #expect(try await client.send(.get, "/api/v1/auth/mfa", bearer: s.accessToken).json["recovery_codes_left"] as? Int == 9)
        }
    }

    @Test func oneStepOfDriftEitherWayAndNoMore() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let (secret, _) = try await enrolled(client, h, s)
            h.clock.advance(by: 300)
            for (steps, accepted) in [(2 as Int64, false), (-2, false), (-1, true), (1, true)] {
                let challenge = try #require(try await login(client).json["challenge"] as? String)
                let r = try await verify(client, challenge, "totp", code(secret, h, steps: steps))
                #expect((r.status == .ok) == accepted, "step \(steps): \(r.status)")
            }
            // Step +1 was used: now's code (an earlier step) is refused as well.
            let challenge = try #require(try await login(client).json["challenge"] as? String)
            #expect(try await verify(client, challenge, "totp", code(secret, h)).errorCode == "INVALID_CODE")
        }
    }

    @Test func theChallengeFollowsEveryFirstFactor() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let (secret, _) = try await enrolled(client, h, s)
            h.clock.advance(by: 30)
            // An emailed code is a first factor like a password.
            #expect(try await client.send(.post, "/api/v1/auth/email/send-code", json: ["email": "ada@example.com"]).status == .ok)
            let mailed = try #require(try h.mail().last { $0.code != nil }?.code)
            let r = try await client.send(.post, "/api/v1/auth/email/verify", json: ["email": "ada@example.com", "code": mailed])
            #expect(r.status == .accepted)
            let session = try await verify(client, try #require(r.json["challenge"] as? String), "totp", code(secret, h)).decode(SessionResponse.self)
            #expect(try Self.amr(session.accessToken) == ["email", "totp", "mfa"])
        }
    }

    @Test func wrongCodesLockTheAppsCodesAcrossARestartButNotTheRecoveryCodes() async throws {
        let folder = temporaryFolder()
        let clock = ManualClock()
        let h = try await harness(folder: folder, clock: clock)
        let (secret, codes) = try await h.test { client async throws -> ([UInt8], [String]) in
            let s = try await registered(client, h)
            let enrolled = try await enrolled(client, h, s)
            h.clock.advance(by: 30)
            // Five wrong app codes in a row, over two challenges (each challenge takes five answers).
            for i in 0..<5 {
                let challenge = try #require(try await login(client).json["challenge"] as? String)
                let r = try await verify(client, challenge, "totp", "000000")
                if i < 4 {
                    #expect(r.errorCode == "INVALID_CODE")
                } else {
                    #expect(r.status == .tooManyRequests && r.retryAfter == 900)
                }
            }
            return enrolled
        }
        await h.server.close()
        let restarted = try await harness(folder: folder, clock: clock)
        try await restarted.test { client async throws in
            let h = restarted
            clock.advance(by: 60)
            // Locked after the restart: even a right code is refused until the lock ends.
            let challenge = try #require(try await login(client).json["challenge"] as? String)
            let locked = try await verify(client, challenge, "totp", code(secret, h))
            #expect(locked.status == .tooManyRequests && locked.retryAfter == 840)
            // Someone who knows the password cannot keep the owner out: a recovery code still works.
            let recovered = try await verify(client, challenge, "recovery_code", codes[0])
            #expect(recovered.status == .ok, "\(recovered.json)")
            clock.advance(by: 840)
            let next = try #require(try await login(client).json["challenge"] as? String)
            let unlocked = try await verify(client, next, "totp", code(secret, h))
            #expect(unlocked.status == .ok, "\(unlocked.json)")
        }
        await restarted.server.close()
    }

    @Test func tenWrongSecondFactorsPerUserIn15MinutesWhateverComesRightBetween() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let (secret, codes) = try await enrolled(client, h, s)
            // Wrong recovery codes (no lockout of their own), with right answers between them: all ten count.
            for round in 0..<10 {
                let challenge = try #require(try await login(client).json["challenge"] as? String)
                #expect(try await verify(client, challenge, "recovery_code", "AAAAA-AAAAA").errorCode == "INVALID_CODE")
                if round == 4 { #expect(try await verify(client, challenge, "recovery_code", codes[0]).status == .ok) }
            }
            h.clock.advance(by: 30)
            let challenge = try #require(try await login(client).json["challenge"] as? String)
            let over = try await verify(client, challenge, "totp", code(secret, h))
            #expect(over.status == .tooManyRequests && (over.retryAfter ?? 0) > 800)
            h.clock.advance(by: 900)
            let later = try #require(try await login(client).json["challenge"] as? String)
            #expect(try await verify(client, later, "totp", code(secret, h, steps: 1)).status == .ok)
        }
    }

    @Test func onlyTheEnrollingSessionConfirmsAndSecretsAreNotCached() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let other = try await login(client).decode(SessionResponse.self)
            let enroll = try await client.send(.post, "/api/v1/auth/mfa/totp/enroll", bearer: s.accessToken)
            #expect(enroll.headers[.cacheControl] == "no-store")
            let secretText = try #require(enroll.json["secret"] as? String)
            let secret = try #require(Self.base32Decode(secretText))
            let elsewhere = try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": code(secret, h)], bearer: other.accessToken)
            #expect(elsewhere.errorCode == "INVALID_STATE")
            let confirm = try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": code(secret, h)], bearer: s.accessToken)
            #expect(confirm.status == .ok && confirm.headers[.cacheControl] == "no-store")
            let replaced = try await client.send(.post, "/api/v1/auth/mfa/recovery-codes", bearer: s.accessToken)
            #expect(replaced.status == .ok && replaced.headers[.cacheControl] == "no-store")
        }
    }

    @Test func enrolmentNeedsAFreshSessionAndAFirstCode() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/totp/enroll").status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": "123456"], bearer: s.accessToken).errorCode == "INVALID_STATE")
            let enroll = try await client.send(.post, "/api/v1/auth/mfa/totp/enroll", bearer: s.accessToken)
            let secretText = try #require(enroll.json["secret"] as? String)
            let secret = try #require(Self.base32Decode(secretText))
            #expect(try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": 123456], bearer: s.accessToken).errorCode == "INVALID_REQUEST")
            // Wrong first codes count down; the fifth ends the enrolment.
            for remaining in [4, 3, 2, 1, 0] {
                let r = try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": "000000"], bearer: s.accessToken)
                #expect(r.errorCode == "INVALID_CODE")
                #expect(((r.json["error"] as? [String: Any])?["details"] as? [String: Any])?["attempts_remaining"] as? Int == remaining)
            }
            #expect(try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": code(secret, h)], bearer: s.accessToken).errorCode == "INVALID_STATE")
            // An enrolment waits ten minutes for its first code.
            let again = try await client.send(.post, "/api/v1/auth/mfa/totp/enroll", bearer: s.accessToken)
            let freshText = try #require(again.json["secret"] as? String)
            let fresh = try #require(Self.base32Decode(freshText))
            h.clock.advance(by: 601)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/totp/confirm", json: ["code": code(fresh, h)], bearer: s.accessToken).errorCode == "INVALID_STATE")
            // And the session is no longer fresh: no new enrolment, no removal.
            #expect(try await client.send(.post, "/api/v1/auth/mfa/totp/enroll", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
            #expect(try await client.send(.delete, "/api/v1/auth/mfa/totp", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
            #expect(try await client.send(.post, "/api/v1/auth/mfa/recovery-codes", bearer: s.accessToken).errorCode == "REAUTH_REQUIRED")
        }
    }

    @Test func removalReplacementAndTheSecretsAtRest() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/recovery-codes", bearer: s.accessToken).errorCode == "INVALID_STATE")
            #expect(try await client.send(.delete, "/api/v1/auth/mfa/totp", bearer: s.accessToken).errorCode == "NOT_FOUND")
            let (secret, codes) = try await enrolled(client, h, s)
            #expect(try await client.send(.post, "/api/v1/auth/mfa/totp/enroll", bearer: s.accessToken).errorCode == "INVALID_STATE")

            // Neither the secret nor a recovery code is stored as it is.
            let user = try #require(try await h.kernel.users.user(email: "ada@example.com"))
            let stored = String(decoding: try JSONEncoder().encode(user.secrets), as: UTF8.self)
            #expect(!stored.contains(Base32.encode(secret)) && !stored.contains(Base64URL.encode(secret)))
            for code in codes { #expect(!stored.contains(code) && !stored.contains(code.replacingOccurrences(of: "-", with: ""))) }

            // A new set replaces the old one.
            let replaced = try await client.send(.post, "/api/v1/auth/mfa/recovery-codes", bearer: s.accessToken)
            let fresh = try #require(replaced.json["recovery_codes"] as? [String])
            #expect(fresh.count == 10 && Set(fresh).isDisjoint(with: codes))
            let challenge = try #require(try await login(client).json["challenge"] as? String)
            #expect(try await verify(client, challenge, "recovery_code", codes[0]).errorCode == "INVALID_CODE")
            #expect(try await verify(client, challenge, "recovery_code", fresh[0]).status == .ok)

            // Removed: sign-ins are not challenged, and GET /mfa lists nothing.
            #expect(try await client.send(.delete, "/api/v1/auth/mfa/totp", bearer: s.accessToken).status == .noContent)
            #expect(try await login(client).status == .ok)
            let mfa = try await client.send(.get, "/api/v1/auth/mfa", bearer: s.accessToken)
            #expect((mfa.json["factors"] as? [Any])?.isEmpty == true && mfa.json["recovery_codes_left"] as? Int == 0)
            #expect(try await client.send(.get, "/api/v1/auth/mfa").status == .unauthorized)
        }
    }

    @Test func concurrentAnswersCannotExceedTheChallengesFive() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            _ = try await enrolled(client, h, s)
            let token = try #require(try await login(client).json["challenge"] as? String)
            let (challenge, _) = try await h.kernel.sessions.pendingChallenge(token)
            // Ten answers arriving at once each take one of the five before being checked.
            let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        do {
                            _ = try await h.kernel.sessions.reserveAnswer(challenge, network: "198.51.100.0/24")
                            return true
                        } catch let error as AuthError where error.code == "INVALID_CHALLENGE" {
                            return false
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(taken == 5)
            #expect(try await verify(client, token, "totp", "000000").errorCode == "INVALID_CHALLENGE")
        }
    }

    @Test func concurrentWrongAnswersTakeExactlyTheBudgetsTenSlots() async throws {
        let h = try await harness(config: Self.manyLogins)
        try await h.test { client async throws in
            let s = try await registered(client, h)
            _ = try await enrolled(client, h, s)
            // Someone with the password opens twelve challenges and answers each five times at once:
            // sixty answers, of which the per-network budget lets exactly ten be checked.
            var challenges: [SignInChallenge] = []
            for _ in 0..<12 {
                let token = try #require(try await login(client).json["challenge"] as? String)
                challenges.append(try await h.kernel.sessions.pendingChallenge(token).0)
            }
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for challenge in challenges {
                    for _ in 0..<5 {
                        group.addTask {
                            do {
                                _ = try await h.kernel.sessions.reserveAnswer(challenge, network: "198.51.100.0/24")
                                return "checked"
                            } catch let error as AuthError {
                                return error.code
                            }
                        }
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(outcomes == ["checked": 10, "RATE_LIMIT_EXCEEDED": 50])
        }
    }

    @Test func oneNetworkThatKnowsThePasswordCannotLockTheOwnerOut() async throws {
        let config = #"{"mail":{"transport":"outbox"},"providers":["email","password","totp"],"http":{"trusted_proxies":["127.0.0.1/32"]},"password":{"login_per_email":{"limit":100,"window":300}}}"#
        let h = try await harness(config: config)
        try await h.test(overSockets: true) { client async throws in
            let s = try await registered(client, h)
            let (_, codes) = try await enrolled(client, h, s)
            func answer(from address: String, _ recoveryCode: String) async throws -> HarnessResponse {
                let from: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: address]
                let login = try await client.send(.post, "/api/v1/auth/password/login", json: ["email": "ada@example.com", "password": Self.password], headers: from)
                let challenge = try #require(login.json["challenge"] as? String)
                return try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "recovery_code": recoveryCode], headers: from)
            }
            for i in 0..<10 { #expect(try await answer(from: "203.0.113.\(i + 1)", "AAAAA-AAAAA").errorCode == "INVALID_CODE") }
            // That /24 has spent its ten; the owner, elsewhere, still signs in with a recovery code.
            #expect(try await answer(from: "203.0.113.200", codes[0]).status == .tooManyRequests)
            #expect(try await answer(from: "198.51.100.7", codes[0]).status == .ok)
            // A right answer gives its own slot back: the owner's network still has all ten.
            for _ in 0..<10 { #expect(try await answer(from: "198.51.100.7", "AAAAA-AAAAA").errorCode == "INVALID_CODE") }
            #expect(try await answer(from: "198.51.100.7", codes[1]).status == .tooManyRequests)
        }
    }

    @Test func fiftyWrongAnswersFromEveryNetworkTogetherCloseTheUser() async throws {
        let h = try await harness(config: Self.manyLogins)
        try await h.test { client async throws in
            let s = try await registered(client, h)
            _ = try await enrolled(client, h, s)
            var refused: [String] = []
            for network in 0..<6 {
                for _ in 0..<2 {
                    let token = try #require(try await login(client).json["challenge"] as? String)
                    let challenge = try await h.kernel.sessions.pendingChallenge(token).0
                    for _ in 0..<5 {
                        do { _ = try await h.kernel.sessions.reserveAnswer(challenge, network: "10.0.\(network).0/24") } catch let error as AuthError { refused.append("\(network) \(error.code)") }
                    }
                }
            }
            // Five networks spend the cap of fifty; the sixth, with none of its own spent, is refused too.
            #expect(refused == Array(repeating: "5 RATE_LIMIT_EXCEEDED", count: 10))
            h.clock.advance(by: 901)
            let token = try #require(try await login(client).json["challenge"] as? String)
            #expect(try await h.kernel.sessions.reserveAnswer(try await h.kernel.sessions.pendingChallenge(token).0, network: "10.0.5.0/24").remaining == 4)
        }
    }

    @Test func anAppSomeoneEnrolledOnAnUnprovenAddressGoesWithTheOwnersReset() async throws {
        let config = #"{"mail":{"transport":"outbox"},"providers":["email","password","totp"],"password":{"require_email_verification":false}}"#
        let h = try await harness(config: config)
        try await h.test { client async throws in
            // Someone registers the owner's address without proving it, and adds an authenticator app.
            #expect(try await client.send(.post, "/api/v1/auth/password/register", json: ["email": "ada@example.com", "password": "the squatter's secret"]).status.code < 300)
            let squatter = try await client.send(.post, "/api/v1/auth/password/login", json: ["email": "ada@example.com", "password": "the squatter's secret"])
                .decode(SessionResponse.self)
            _ = try await enrolled(client, h, squatter)
            // The inbox's owner resets the password: the app goes too, or it would keep them out.
            #expect(try await client.send(.post, "/api/v1/auth/password/reset/email/initiate", json: ["email": "ada@example.com"]).status == .ok)
            var code: String?
            for _ in 0..<6000 where code == nil {
                code = try h.mail().last { $0.subject.contains("reset") }?.code
                if code == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let reset = try await client.send(
                .post, "/api/v1/auth/password/reset/email/verify", json: ["email": "ada@example.com", "code": try #require(code), "new_password": "the owner's own secret"])
            #expect(reset.status == .ok)
            h.clock.advance(by: 30)
            let owner = try await client.send(.post, "/api/v1/auth/password/login", json: ["email": "ada@example.com", "password": "the owner's own secret"])
            #expect(owner.status == .ok, "\(owner.json)")
        }
    }

    @Test func verifyNeedsExactlyOneOfferedAnswer() async throws {
        let h = try await harness()
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let (secret, codes) = try await enrolled(client, h, s)
            h.clock.advance(by: 30)
            let challenge = try #require(try await login(client).json["challenge"] as? String)
            let both = try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "totp": code(secret, h), "recovery_code": codes[0]])
            #expect(both.errorCode == "INVALID_REQUEST")
            #expect(try await verify(client, challenge, "email_code", "123456").errorCode == "INVALID_REQUEST")
            #expect(try await verify(client, "not-a-challenge", "totp", code(secret, h)).errorCode == "INVALID_CHALLENGE")
            #expect(try await client.send(.post, "/api/v1/auth/mfa/verify", json: ["challenge": challenge, "totp": 123456]).errorCode == "INVALID_CODE")
            // This challenge offers no emailed code.
            #expect(try await client.send(.post, "/api/v1/auth/mfa/email-code", json: ["challenge": challenge]).errorCode == "INVALID_STATE")
        }
    }

    @Test func anAuthenticatorAppTakesThePlaceOfTheEmailedCode() async throws {
        let config = #"{"mail":{"transport":"outbox"},"providers":["email","password","totp"],"password":{"login_requires_email_code":true}}"#
        let h = try await harness(config: config)
        try await h.test { client async throws in
            let s = try await registered(client, h)
            let before = try await login(client)
            #expect(before.json["factors"] as? [String] == ["email_code"])
            let mailed = try #require(try h.mail().last?.code)
            let session = try await verify(client, try #require(before.json["challenge"] as? String), "email_code", mailed).decode(SessionResponse.self)
            _ = try await enrolled(client, h, session)
            #expect(try await noticeArrives(h))
            h.clock.advance(by: 30)
            let mailCount = try h.mail().count
            let after = try await login(client)
            #expect(after.json["factors"] as? [String] == ["totp", "recovery_code"])
            // The notice of the new method was the last mail; the challenge mailed nothing.
            #expect(try h.mail().count == mailCount)
            _ = s
        }
    }
}
