import AuthdCore
import ArgumentParser
import AuthKernel
import Foundation

/// `authd export --to FILE`: every user, identity, credential, session and key, from either backend.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every record, key and secret of the configured store to one file (mode 0600).",
        discussion: """
            Works on either backend, also while authd serve runs. The file has the backup format:
            `authd import` loads it into an empty store of either backend (a data folder into
            PostgreSQL, or back), and `authd restore` into a data folder. It holds password hashes,
            signing keys and secrets: keep it as safe as the data itself.

            Examples:
              authd export --to /tmp/authd-export.json --data /var/lib/authd
            """
    )
    @OptionGroup var target: DataFolderOptions
    @Option(help: "The file to write.") var to: String

    func run() async throws {
        try await AdminConnection.run(.export(to: URL(fileURLWithPath: to).path), target)
    }
}

/// `authd import --from FILE`: loads an export (or backup) into the configured, empty store.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load an export or backup into the configured store, which must be empty.",
        discussion: """
            With storage.backend = postgres: run `authd migrate`, then import, then start the
            instances (they read the imported keys and secrets at start-up). With the file backend
            the data folder's server must be stopped.

            Examples:
              authd export --to move.json --data /var/lib/authd              # from the data folder
              authd migrate --config /etc/authd/postgres.json
              authd import --from move.json --config /etc/authd/postgres.json
            """
    )
    @OptionGroup var target: DataFolderOptions
    @Option(help: "The export or backup file.") var from: String

    func run() async throws {
        // Never through a running server: its providers have already read their secrets.
        if AdminConnection.serverIsRunning(folder: target.folder) {
            throw AdminConnection.fail("authd serve is running on \(target.folder): stop it first, then import")
        }
        let line = ProgressLine.onTerminal()
        let output = try await AdminConnection.runDirectly(.importBundle(from: URL(fileURLWithPath: from).path), target, progress: line?.sink)
        line?.finish()
        try AdminConnection.show(output)
    }
}
