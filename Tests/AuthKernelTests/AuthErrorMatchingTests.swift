import AuthKernel
import HTTPTypes
import Testing

/// Errors match by their contract code in `catch` and `switch`, whatever their message and details.
struct AuthErrorMatchingTests {
    func fail(_ error: AuthError) throws { throw error }

    @Test func catchAndSwitchMatchByCode() throws {
        var caught = ""
        do { try fail(.invalidCode(attemptsRemaining: 3)) } catch AuthError.invalidCode { caught = "invalid code" } catch { caught = "other" }
        #expect(caught == "invalid code", "details differ, the code is the same")
        do { try fail(.rateLimited(retryAfter: 5)) } catch AuthError.invalidCode { caught = "invalid code" } catch { caught = "other" }
        #expect(caught == "other")
        switch AuthError(status: .unauthorized, code: "INVALID_CHALLENGE", message: "a provider's own wording") {
        case AuthError.invalidChallenge: caught = "challenge"
        default: caught = "other"
        }
        #expect(caught == "challenge")
        #expect(AuthError.invalidCode(attemptsRemaining: 1) != AuthError.invalidCode(attemptsRemaining: 0), "equality still sees the details")
    }

    @Test func aCodePolicyTakesItsDigits() {
        #expect(CodePolicy(ttl: 60, resendInterval: 0, maxAttempts: 3, maxFailures: 10, failureWindow: 600).digits == 6)
        #expect(CodePolicy(ttl: 60, resendInterval: 0, maxAttempts: 3, maxFailures: 10, failureWindow: 600, digits: 8).digits == 8)
    }
}
