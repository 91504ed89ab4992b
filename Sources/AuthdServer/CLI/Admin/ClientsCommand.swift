import AuthdCore
import ArgumentParser
import AuthKernel

/// `authd clients …`: the apps that sign people in with authd (OpenID Connect, contract §13).
struct ClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "Register, list or delete the apps that sign people in with authd (OpenID Connect).",
        discussion: """
            `create` prints the client id and, for a confidential client, its secret, once; only a hash
            of the secret is kept. Redirect URIs must match exactly (a public client's loopback
            http://127.0.0.1 redirect may use any port).

            Examples:
              authd clients create Grafana --redirect-uri https://grafana.example.com/login/generic_oauth
              authd clients create "Photo app" --public --redirect-uri com.example.photos:/oauth
              authd clients list
              authd clients delete CLIENT_ID
            """,
        subcommands: [Create.self, List.self, Delete.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a client and print its id (and secret, once).")
        @Argument(help: "The app's name, as the consent page shows it.") var name: String
        @Option(name: .customLong("redirect-uri"), help: "Where the app receives the code; repeat for several.") var redirectURIs: [String] = []
        @Flag(help: "A public client (a native or browser app): no secret, PKCE always.") var `public` = false
        @Flag(name: .customLong("first-party"), help: "The deployment's own app: no consent is asked.") var firstParty = false
        @Option(help: "`optional` for a confidential client that sends no PKCE (it must then send a nonce).") var pkce: String?
        @Option(name: .customLong("id-token-alg"), help: "RS256 (the default), EdDSA or Ed25519.") var idTokenAlg = "RS256"
        @OptionGroup var target: DataFolderOptions

        func validate() throws {
            if redirectURIs.isEmpty { throw ValidationError("give at least one --redirect-uri") }
            if let pkce, pkce != "optional" { throw ValidationError("--pkce takes only `optional`") }
            if !["RS256", "EdDSA", "Ed25519"].contains(idTokenAlg) { throw ValidationError("--id-token-alg is RS256, EdDSA or Ed25519") }
        }

        func run() async throws {
            try await AdminConnection.run(
                .createClient(
                    name: name, redirectURIs: redirectURIs, isPublic: self.public, firstParty: firstParty, pkceOptional: pkce == "optional",
                    idTokenAlg: idTokenAlg), target)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every registered client.")
        @OptionGroup var target: DataFolderOptions
        @Flag(help: "Print JSON instead of a table.") var json = false
        func run() async throws { try await AdminConnection.run(.listClients(json: json), target) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a client by id.")
        @Argument(help: "The client id.") var clientID: String
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.deleteClient(clientID), target) }
    }
}
