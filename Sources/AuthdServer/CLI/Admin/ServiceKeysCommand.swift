import AuthdCore
import ArgumentParser
import AuthKernel

/// `authd service-keys …`: the keys an app's own backend holds to ask authd about tokens.
struct ServiceKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service-keys",
        abstract: "Create, list or revoke service keys (authd_sk_…) for your own backend.",
        discussion: """
            A service key lets a resource server ask POST /oauth/introspect whether an access token or
            an API key is still active. `create` prints the secret once; only its hash is kept.

            Examples:
              authd service-keys create photo-backend
              authd service-keys list --json
              authd service-keys revoke photo-backend
            """,
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a service key and print its secret (once).")
        @Argument(help: "A name: letters, digits, -, _ and . (at most 64).") var name: String
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.createServiceKey(name), target) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every service key, by name and prefix.")
        @OptionGroup var target: DataFolderOptions
        @Flag(help: "Print JSON instead of a table.") var json = false
        func run() async throws { try await AdminConnection.run(.listServiceKeys(json: json), target) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a service key by name: it stops working at once.")
        @Argument(help: "The key's name.") var name: String
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.revokeServiceKey(name), target) }
    }
}
