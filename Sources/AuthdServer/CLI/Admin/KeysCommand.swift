import AuthdCore
import ArgumentParser
import AuthKernel

/// `authd keys …`: list and rotate signing keys.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "List the signing keys or rotate to a new one.",
        discussion: """
            After `keys rotate` new tokens are signed with the new key at once; the old public key
            stays in /.well-known/jwks.json until every token it signed has expired (tokens.access_ttl
            plus tokens.clock_skew), then drops out by itself.

            Examples:
              authd keys list
              authd keys rotate --data /var/lib/authd
            """,
        subcommands: [List.self, Rotate.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every signing key: signing, verifying (retired, still published) or expired.")
        @OptionGroup var target: DataFolderOptions
        @Flag(help: "Print JSON instead of a table.") var json = false
        func run() async throws { try await AdminConnection.run(.listKeys(json: json), target) }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a new signing key; the old one keeps verifying until its tokens expire.")
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.rotateKey, target) }
    }
}
