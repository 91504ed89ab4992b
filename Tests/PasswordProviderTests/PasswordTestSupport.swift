import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import PasswordProvider

enum PasswordTest {
    static let config = #"{"mail":{"transport":"outbox"},"password":{"lockout_after":3,"lockout":60}}"#
    static let password = "correct horse battery"

    static func harness(_ config: String = Self.config) async throws -> TestHarness {
        try await TestHarness.make(providers: [PasswordProvider.self], config: config)
    }

    static func lastCode(_ h: TestHarness, to email: String) throws -> String? {
        try h.mail(to: email).last { $0.code != nil }?.code
    }

    /// Waits (up to a minute, generous for a loaded machine; it returns as soon as the mail is there) for mail that is sent after the answer, as reset codes are.
    static func waitForMail(_ h: TestHarness, count: Int) async throws -> [SentMail] {
        for _ in 0..<6000 {
            let mail = try h.mail()
            if mail.count >= count { return mail }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try h.mail()
    }

    /// Registers and verifies, returning the session.
    static func registered(_ client: HarnessClient, _ h: TestHarness, email: String, password: String = password) async throws -> SessionResponse {
        let r = try await client.send(.post, "/api/v1/auth/password/register", json: ["email": email, "password": password])
        guard r.status == .accepted else { throw TestFailure("register answered \(r.status)") }
        let code = try lastCode(h, to: email) ?? ""
        return try await client.send(.post, "/api/v1/auth/password/verify-email", json: ["email": email, "code": code, "password": password]).decode(SessionResponse.self)
    }

    static func login(_ client: HarnessClient, _ email: String, _ password: String) async throws -> HarnessResponse {
        try await client.send(.post, "/api/v1/auth/password/login", json: ["email": email, "password": password])
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
