package import AuthKernel
package import AuthStorage

/// `authd import-users`: reads another system's users with the password and PIN hashes the
/// built-in providers know. The full server (`AuthdServer`) provides it; without one the command
/// answers that this server cannot import.
package typealias UserImporter = @Sendable (
    _ path: String, _ dryRun: Bool, _ store: any AuthStore, _ clock: any AuthClock, _ progress: @escaping AdminProgressSink
) async throws -> UserImportOutcome

/// What an import did.
package struct UserImportOutcome: Sendable {
    /// The report a person reads.
    package var text: String
    /// Users imported (or, on a dry run, that would be).
    package var imported: Int
    /// Lines refused.
    package var refused: Int

    package init(text: String, imported: Int, refused: Int) {
        self.text = text
        self.imported = imported
        self.refused = refused
    }
}
