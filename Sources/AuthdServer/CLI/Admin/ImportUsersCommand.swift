import AuthdCore
import ArgumentParser
import AuthKernel
import Foundation

/// `authd import-users FILE`: users from another system (contract §11).
struct ImportUsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-users",
        abstract: "Import users from another system: one JSON object per line, password hashes kept until first sign-in.",
        discussion: """
            Each line: {"id"?, "email", "email_verified", "display_name", "created_at", "password_hash",
            "pin_hash", "identities"?: [{"provider":"apple","subject"}], "app_metadata", "user_metadata"}.
            pin_hash is sha256$SALT$HEX (SHA-256 of salt + PIN); a user without an email needs id and pin_hash.
            password_hash may be bcrypt ($2a$/$2b$/$2y$, cost at most 14), Django's pbkdf2_sha256$,
            bcrypt_sha256$ or argon2$, or an Argon2 PHC string; it is checked at the user's first
            sign-in and replaced by Argon2id. A line whose email, id or identity exists is skipped; the
            import mails nobody. Works while authd serve runs. Exits 1 when a line was refused.

            Examples:
              authd import-users users.jsonl --dry-run
              authd import-users users.jsonl --data /var/lib/authd
            """
    )
    @Argument(help: "The JSON-lines file.") var file: String
    @Flag(help: "Check every line and report, writing nothing.") var dryRun = false
    @OptionGroup var target: DataFolderOptions

    func run() async throws {
        try await AdminConnection.run(.importUsers(from: URL(fileURLWithPath: file).path, dryRun: dryRun), target)
    }
}
