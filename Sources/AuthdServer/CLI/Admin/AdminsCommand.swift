import AuthdCore
import ArgumentParser

/// `authd admins`: who may use the console at /admin (contract §14).
struct AdminsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admins",
        abstract: "Grant, revoke, list or invite the operators of the console (ISSUER/admin).",
        discussion: """
            An operator signs in on /login with a passkey or an authenticator app (TOTP) and manages
            users, apps, keys and webhooks in the browser. `invite` prints a single-use link (24 h)
            that makes the email's account verified, has its holder add a passkey or TOTP, and grants
            the role: the first operator's way in.

            Examples:
              authd admins invite you@example.com
              authd admins grant anna@example.com
              authd admins list
              authd admins revoke anna@example.com
            """,
        subcommands: [Invite.self, Grant.self, Revoke.self, List.self]
    )

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a single-use link (24 h) that makes EMAIL's account an operator.")
        @Argument(help: "The operator's email (the account is made when the link is opened, if there is none).") var email: String
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.inviteOperator(email), target) }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make an existing user with a verified email an operator.")
        @Argument(help: "The user's email, id or username.") var user: String
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.grantOperator(user), target) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take the role away: the next request to the console is refused.")
        @Argument(help: "The user's email, id or username.") var user: String
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.revokeOperator(user), target) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every operator, by email.")
        @OptionGroup var target: DataFolderOptions
        @Flag(help: "Print JSON instead of a table.") var json = false
        func run() async throws { try await AdminConnection.run(.listOperators(json: json), target) }
    }
}
