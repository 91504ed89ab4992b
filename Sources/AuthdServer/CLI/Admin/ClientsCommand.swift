import AuthdCore
import ArgumentParser
import AuthKernel
import Foundation

/// `authd clients …`: the apps that sign people in with authd (OpenID Connect, contract §13).
struct ClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "Register, list, change or delete the apps that sign people in with authd (OpenID Connect).",
        discussion: """
            `create` prints the client id and, for a confidential client, its secret, once; only a hash
            of the secret is kept. Redirect URIs must match exactly (a public client's loopback
            http://127.0.0.1 redirect may use any port).

            Examples:
              authd clients create Grafana --redirect-uri https://grafana.example.com/login/generic_oauth
              authd clients create "Photo app" --public --redirect-uri com.example.photos:/oauth
              authd clients list
              authd clients update CLIENT_ID --claims groups --post-logout-redirect-uri https://grafana.example.com/login
              authd clients rotate-secret CLIENT_ID --grace 3600
              authd clients delete CLIENT_ID
            """,
        subcommands: [Create.self, List.self, Show.self, Update.self, RotateSecret.self, Delete.self]
    )

    /// The flags `create` and `update` share.
    struct SettingsOptions: ParsableArguments {
        @Option(name: .customLong("redirect-uri"), help: "Where the app receives the code; repeat for several (update: replaces them).")
        var redirectURIs: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"), help: "Where logout may send the person back; repeat for several.")
        var postLogoutRedirectURIs: [String] = []
        @Option(help: "`optional` for a confidential client that sends no PKCE (it may then send neither PKCE nor a nonce: Gitea's login source); `required` undoes it.") var pkce: String?
        @Option(name: .customLong("id-token-alg"), help: "RS256 (the default), EdDSA or Ed25519.") var idTokenAlg: String?
        @Option(help: "app_metadata keys given as claims of the same name, comma-separated (groups,plan).") var claims: String?
        @Flag(name: .customLong("allow-pin"), inversion: .prefixedNo, help: "The sign-in page offers user name + PIN for this app.")
        var allowPin: Bool?
        @Flag(name: .customLong("unverified-email"), inversion: .prefixedNo, help: "Give `email` even when it is not verified.")
        var unverifiedEmail: Bool?
        @Option(
            name: .customLong("allowed-groups"),
            help: "Only members of these groups may sign in, comma-separated (family,admins); \"\" lets everyone in again (the default).")
        var allowedGroups: String?
        @Option(
            name: .customLong("logo-uri"),
            help: "The app's logo on the sign-in page, beside its name: an https URL, or a data:image/(png|svg+xml|jpeg|webp);base64, URI of at most 64 KiB; \"\" removes it.")
        var logoURI: String?

        func validate() throws {
            if let pkce, !["optional", "required"].contains(pkce) { throw ValidationError("--pkce is `optional` or `required`") }
            if let idTokenAlg, !["RS256", "EdDSA", "Ed25519"].contains(idTokenAlg) { throw ValidationError("--id-token-alg is RS256, EdDSA or Ed25519") }
        }

        var settings: OpenIDClientSettings {
            var s = OpenIDClientSettings()
            if !redirectURIs.isEmpty { s.redirectURIs = redirectURIs }
            if !postLogoutRedirectURIs.isEmpty { s.postLogoutRedirectURIs = postLogoutRedirectURIs }
            s.pkceOptional = pkce.map { $0 == "optional" }
            s.idTokenAlg = idTokenAlg
            s.claims = claims.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            (s.allowPin, s.unverifiedEmail) = (allowPin, unverifiedEmail)
            s.logoURI = logoURI
            s.allowedGroups = allowedGroups.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            return s
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a client and print its id (and secret, once).")
        @Argument(help: "The app's name, as the consent page shows it.") var name: String
        @Flag(help: "A public client (a native or browser app): no secret, PKCE always.") var `public` = false
        @Flag(name: .customLong("first-party"), help: "The deployment's own app: no consent is asked, except for a public client's loopback or custom-scheme redirect, asked every time (any local program may listen there).") var firstParty = false
        @OptionGroup var options: SettingsOptions
        @OptionGroup var target: DataFolderOptions

        func validate() throws {
            if options.redirectURIs.isEmpty { throw ValidationError("give at least one --redirect-uri") }
        }

        func run() async throws {
            var settings = options.settings
            (settings.name, settings.isPublic, settings.firstParty) = (name, self.public, firstParty)
            try await AdminConnection.run(.createClient(settings), target)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a client's settings; what is not given stays.")
        @Argument(help: "The client id.") var clientID: String
        @Option(help: "A new name.") var name: String?
        @Flag(name: .customLong("first-party"), inversion: .prefixedNo, help: "The deployment's own app: no consent is asked, except for a public client's loopback or custom-scheme redirect, asked every time (any local program may listen there).")
        var firstParty: Bool?
        @OptionGroup var options: SettingsOptions
        @OptionGroup var target: DataFolderOptions

        func run() async throws {
            var settings = options.settings
            (settings.name, settings.firstParty) = (name, firstParty)
            guard settings != OpenIDClientSettings() else { throw ValidationError("give at least one setting to change") }
            try await AdminConnection.run(.updateClient(clientID, settings), target)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One client's settings (never its secret).")
        @Argument(help: "The client id.") var clientID: String
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.showClient(clientID, json: json), target) }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret", abstract: "Print a new secret, once; the old one works --grace more seconds (default 0).")
        @Argument(help: "The client id.") var clientID: String
        @Option(help: "Seconds the old secret keeps working, up to 604800 (a week), while the app is reconfigured.") var grace = 0
        @OptionGroup var target: DataFolderOptions
        func run() async throws { try await AdminConnection.run(.rotateClientSecret(clientID, grace: grace), target) }
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
