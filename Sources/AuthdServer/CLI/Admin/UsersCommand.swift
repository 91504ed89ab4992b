import AuthdCore
import ArgumentParser
import AuthKernel

/// `authd users …`: list, show, disable, enable and delete users.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "List, show, disable, enable, delete or invite users, or change their groups.",
        discussion: """
            While authd serve runs, the command goes to it over DATA/admin.sock; otherwise it opens the
            data folder itself under its lock. The output is the same either way.

            Examples:
              authd users list
              authd users list --json --data /var/lib/authd
              authd users show anna@example.com
              authd users disable 1b4e28ba-2fa1-11d2-883f-0016d3cca427
              authd users groups anna@example.com add family
              authd users invite grandpa@example.com --group family --display-name Grandpa
              authd users invitations
            """,
        subcommands: [List.self, Show.self, Disable.self, Enable.self, Delete.self, Groups.self, Invite.self, Invitations.self]
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

    struct Groups: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user to groups or remove it from them: apps registered --allowed-groups let in only their groups' members.",
            discussion: "A removed member's apps are refused at their next token refresh, on every instance.")
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The user's id, email or username.") var user: String
        @Argument(help: "add or remove.") var change: String
        @Argument(help: "The groups: 1 to 64 of a-z, 0-9, _, . and -.") var groups: [String]

        func validate() throws {
            guard ["add", "remove"].contains(change) else { throw ValidationError("say `add` or `remove` after the user") }
            guard !groups.isEmpty else { throw ValidationError("name at least one group") }
        }

        func run() async throws { try await AdminConnection.run(.changeGroups(user, add: change == "add", groups), target) }
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite an address: a link, mailed and printed once, that makes the account with its groups (7 days, single use).",
            discussion: """
                The link alone makes no account: the page it opens mails a code to the address and makes the
                account once the code comes back (--vouch skips that check: you vouch for the address; audited).
                For an address that has an account the link asks for that account's own sign-in, then adds the
                groups. An invitation makes an account whatever signup.mode says. Prints JSON:
                {"invitation_id","url","expires_at"}.
                """)
        @OptionGroup var target: DataFolderOptions
        @Argument(help: "The address to invite.") var email: String
        @Option(name: .customLong("group"), help: "A group the account gets; repeat for several.") var groups: [String] = []
        @Option(name: .customLong("display-name"), help: "The name the account starts with.") var displayName: String?
        @Flag(help: "Make the account when the link is opened, without mailing a code to the address first.") var vouch = false
        func run() async throws { try await AdminConnection.run(.inviteUser(email, groups: groups, displayName: displayName, vouch: vouch), target) }
    }

    struct Invitations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The pending invitations; `revoke ID` ends one.", subcommands: [ListPending.self, Revoke.self], defaultSubcommand: ListPending.self)

        struct ListPending: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "The pending invitations, soonest to expire first.")
            @OptionGroup var target: DataFolderOptions
            @Flag(help: "Print JSON instead of a table.") var json = false
            func run() async throws { try await AdminConnection.run(.listInvitations(json: json), target) }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "End a pending invitation: its link stops working.")
            @OptionGroup var target: DataFolderOptions
            @Argument(help: "The invitation's id (inv_…).") var id: String
            func run() async throws { try await AdminConnection.run(.revokeInvitation(id), target) }
        }
    }
}
