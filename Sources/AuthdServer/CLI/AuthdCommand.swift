import AuthdCore
import AuthKernel
import ArgumentParser

/// `authd`: the server and its admin commands (see ``Authd/main(providers:)``).
struct AuthdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authd",
        abstract: "A self-hosted authentication server: email codes, signed Ed25519 access tokens, rotating refresh tokens.",
        discussion: """
            Examples:
              authd serve                       # serve ./data on 127.0.0.1:8080
              authd serve --data /var/lib/authd --host 0.0.0.0 --port 9000
              authd users list                  # admin commands reach a running server over DATA/admin.sock
              authd keys rotate
              authd backup --to backup.json
              authd migrate                     # storage.backend = postgres: create or update the schema
            """,
        version: AuthdVersion.current,
        subcommands: [
            ServeCommand.self, UsersCommand.self, SessionsCommand.self, KeysCommand.self, BackupCommand.self, RestoreCommand.self,
            CheckCommand.self, AuditCommand.self, MigrateCommand.self, ExportCommand.self, ImportCommand.self, OpenAPICommand.self, SettingsCommand.self, ClientsCommand.self,
            ServiceKeysCommand.self,
            ImportUsersCommand.self, HealthCommand.self, AdminsCommand.self, CatalogCommand.self,
        ]
    )
}
