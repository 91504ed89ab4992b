import AuthdCore
import ArgumentParser
import AuthKernel

/// `authd sessions …`: list and end sessions.
struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List a user's sessions or end them.",
        discussion: """
            Examples:
              authd sessions list anna@example.com
              authd sessions revoke 9f1c2d3e-…
              authd sessions revoke --all-for anna@example.com
            """,
        subcommands: [List.self, Revoke.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A user's sessions, oldest first.")
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The user's id, email or username.") var user: String
        @Flag(help: "Print JSON instead of a table.") var json = false
        func run() async throws { try await AdminConnection.run(.listSessions(user, json: json), target) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End one session, or every session of a user with --all-for.")
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The session's id.") var session: String?
        @Option(name: .customLong("all-for"), help: "End every session of this user (id, email or username).") var allFor: String?

        func validate() throws {
            guard (session == nil) != (allFor == nil) else { throw ValidationError("Give a session id or --all-for USER, not both or neither.") }
        }

        func run() async throws {
            if let allFor {
                try await AdminConnection.run(.revokeAllSessions(allFor), target)
            } else if let session {
                try await AdminConnection.run(.revokeSession(session), target)
            }
        }
    }
}
