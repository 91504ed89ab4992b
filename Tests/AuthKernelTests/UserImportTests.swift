@testable import AuthdCore
@testable import AuthdServer
import AuthKernel
import AuthKernelTesting
import Foundation
import Testing

/// `authd import-users` (contract §11, §12): a line whose hash would cost more than the bounds is
/// refused with its reason, and the lines around it are imported.
struct UserImportTests {
    /// Finding 3 of the second review: `t=4294967295` was imported, and one sign-in then held a
    /// hashing thread for hours.
    @Test func argon2HashesWithTooManyPassesOrLanesAreRefusedPerLine() async throws {
        let h = try await TestHarness.make(configure: { $0.addFullServerParts() })
        let phc = "$argon2id$v=19$m=8192,PARAMS$SaOKujm2vQReHXB55+DFUQ$EsOtIwpyde/wpniJQPh5+dkqboHqyz5sptrQGUYhvfc"
        let lines = [
            #"{"email":"fine@example.com","password_hash":"\#(phc.replacingOccurrences(of: "PARAMS", with: "t=3,p=4"))"}"#,
            #"{"email":"hours@example.com","password_hash":"\#(phc.replacingOccurrences(of: "PARAMS", with: "t=4294967295,p=1"))"}"#,
            #"{"email":"lanes@example.com","password_hash":"argon2\#(phc.replacingOccurrences(of: "PARAMS", with: "t=1,p=64"))"}"#,
        ]
        let file = h.folder + "/users.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let operations = try AdminOperations(server: h.server, dataFolder: h.folder)
        let output = await operations.run(.importUsers(from: file, dryRun: false))
        #expect(output.exitCode == 1, "a refused line makes the command fail")
        #expect(output.text.contains("1 user imported, 0 skipped (already there), 2 refused"), "\(output.text)")
        #expect(output.text.contains("line 2: password_hash: Argon2 time cost t=4294967295 is over 10"), "\(output.text)")
        #expect(output.text.contains("line 3: password_hash: Argon2 parallelism p=64 is over 8"), "\(output.text)")
        #expect(try await h.kernel.users.user(email: "fine@example.com") != nil)
        #expect(try await h.kernel.users.user(email: "hours@example.com") == nil)
        #expect(try await h.kernel.users.user(email: "lanes@example.com") == nil)
        await h.server.close()
    }
}
