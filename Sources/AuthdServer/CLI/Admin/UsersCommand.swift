import AuthdCore
import ArgumentParser
import AuthKernel

/// `authd users …`: list, show, disable, enable and delete users.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "List, show, disable, enable or delete users.",
        discussion: """
            While authd serve runs, the command goes to it over DATA/admin.sock; otherwise it opens the
            data folder itself under its lock. The output is the same either way.

            Examples:
              authd users list
              authd users list --json --data /var/lib/authd
              authd users show anna@example.com
              authd users disable 1b4e28ba-2fa1-11d2-883f-0016d3cca427
            """,
        subcommands: [List.self, Show.self, Disable.self, Enable.self, Delete.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every user, oldest first: a table, or JSON with --json.")
        @OptionGroup var target: DataFolderOptions
        @Flag(help: "Print JSON instead of a table.") var json = false
        func run() async throws { try await AdminConnection.run(.listUsers(json: json), target) }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One user, by id, email or username.")
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The user's id, email or username.") var user: String
        @Flag(help: "Print JSON instead of a table.") var json = false
        func run() async throws { try await AdminConnection.run(.showUser(user, json: json), target) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a user: its sessions end and it cannot sign in until enabled.")
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The user's id, email or username.") var user: String
        func run() async throws { try await AdminConnection.run(.setDisabled(user, true), target) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user again.")
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The user's id, email or username.") var user: String
        func run() async throws { try await AdminConnection.run(.setDisabled(user, false), target) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a user with its identities, sessions and codes (as DELETE /account does).")
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The user's id, email or username.") var user: String
        func run() async throws { try await AdminConnection.run(.deleteUser(user), target) }
    }
}
