import AuthdCore
import AuthStorage
import ArgumentParser
import AuthKernel
import Foundation

/// `authd backup --to FILE`: a consistent copy of the store and keys, also while the server runs.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write the store and the keys to one file (mode 0600), also while authd serve runs.",
        discussion: """
            The backup holds every change acknowledged before it was taken, and the keys: signing
            keys, the code secret and the PIN pepper. Keep it as safe as the data folder.

            Examples:
              authd backup --to /var/backups/authd-$(date +%F).json
            """
    )
    @OptionGroup var target: DataFolderOptions
    @Option(help: "The file to write.") var to: String

    func run() async throws {
        let path = URL(fileURLWithPath: to).path  // absolute: the server may run elsewhere
        try await AdminConnection.run(.backup(to: path), target)
    }
}

/// `authd restore --from FILE`: replaces a stopped server's store and keys with a backup's.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the data folder's store and keys with a backup (authd serve must be stopped).",
        discussion: """
            Examples:
              systemctl stop authd
              authd restore --from /var/backups/authd-2026-11-22.json --data /var/lib/authd
              authd check --data /var/lib/authd
              systemctl start authd
            """
    )
    @OptionGroup var target: DataFolderOptions
    @Option(help: "The backup file.") var from: String

    func run() async throws {
        if AdminConnection.serverIsRunning(folder: target.folder) {
            throw AdminConnection.fail("authd serve is running on \(target.folder): stop it first, then restore")
        }
        do {
            let summary = try await AdminBackup.restore(from: from, to: target.folder)
            FileHandle.standardOutput.write(Data((summary + "\n").utf8))
        } catch StoreError.locked {
            throw AdminConnection.fail("authd serve is running on \(target.folder): stop it first, then restore")
        } catch {
            throw AdminConnection.fail(AdminBackup.message(of: error))
        }
    }
}

/// `authd check`: validates the configuration and the data folder and says what would be served.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate the configuration and the data folder; print what would be served.",
        discussion: """
            With authd serve running, the running server answers; otherwise the folder is opened
            (journal replayed, keys loaded, providers configured) and closed again, changing nothing.

            Examples:
              authd check --data /var/lib/authd --config /etc/authd.json
            """
    )
    @OptionGroup var target: DataFolderOptions
    func run() async throws { try await AdminConnection.run(.check, target) }
}
