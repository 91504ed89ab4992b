@testable import AuthKernel
import AuthKernelTesting
import AuthdCore
import Testing

/// A service that holds a secret is logged at start-up by ServiceLifecycle (debug level) with its
/// description: the secret's bytes must never be in it, nor in a `dump` or a debug description.
struct RedactedDescriptionTests {
    @Test func noDescriptionOfTheKernelOrItsServicesHoldsTheirSecrets() async throws {
        let h = try await TestHarness.make(providers: [])
        defer { Task { await h.server.close() } }
        let secret = h.kernel.codes.secret
        #expect(secret.count == 32)
        // The bytes as Swift writes an array of them: "[12, 200, …]", and any run of four of them.
        let written = secret.map(String.init)
        func leaks(_ text: String) -> Bool {
            (0...(written.count - 4)).contains { text.contains(written[$0..<$0 + 4].joined(separator: ", ")) }
        }
        for value in [h.kernel as Any, h.kernel.codes, h.kernel.tokens, h.kernel.approvals, try SecretBox(key: secret)] {
            var dumped = ""
            dump(value, to: &dumped)
            #expect(!leaks(String(describing: value)) && !leaks(String(reflecting: value)) && !leaks(dumped), "\(type(of: value))")
            #expect(String(describing: value).contains("redacted"))
        }
    }
}
