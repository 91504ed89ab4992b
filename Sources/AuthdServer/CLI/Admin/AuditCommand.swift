import AuthdCore
import AuthStorage
import AuthKernel
import ArgumentParser
import Foundation

/// `authd audit tail`: the last security events of `DATA/audit.jsonl`, optionally following it.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Read the audit log (DATA/audit.jsonl).",
        subcommands: [Tail.self, Events.self]
    )

    /// The events the kernel and this build's providers declare, by name.
    static var known: [AuditEventDeclaration] {
        var seen = Set<String>()
        return (AuditEventDeclaration.kernel + Authd.providers.types.flatMap { $0.auditEvents }).filter { seen.insert($0.name).inserted }
    }

    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the audit events the kernel and this build's providers declare, one per line with what it means.")

        func run() async throws {
            let events = AuditCommand.known.sorted { $0.name < $1.name }
            let width = events.map(\.name.count).max() ?? 0
            for event in events {
                print(event.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + event.summary)
            }
        }
    }

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the last audit events, one JSON line each; with --follow, keep printing new ones.",
            discussion: """
                Reads the file directly (it needs no running server). `authd audit events` lists the
                events, and --event takes only those.

                Examples:
                  authd audit tail
                  authd audit tail --user anna@example.com -n 100
                  authd audit tail --event sign_in_failed
                  authd audit tail --follow --data /var/lib/authd
                """
        )
        @OptionGroup var target: DataFolderOptions
        @Option(help: "Only events of this user id, or of this email or username tried.") var user: String?
        @Option(help: "Only events of this name (see `authd audit events`).") var event: String?
        @Option(name: [.customShort("n"), .long], help: "How many of the last events to print.") var lines = 20
        @Flag(help: "Keep printing events as they are written (stop with Ctrl-C).") var follow = false

        func validate() throws {
            if let event, !AuditCommand.known.contains(where: { $0.name == event }) {
                throw ValidationError("no audit event is named \(event); these are: \(AuditCommand.known.map(\.name).sorted().joined(separator: ", "))")
            }
        }

        func run() async throws {
            let path = target.folder + "/audit.jsonl"
            var offset = 0
            var pending = Data()
            var last: [String] = []
            if let data = FileManager.default.contents(atPath: path) {
                offset = data.count
                let text = String(decoding: data, as: UTF8.self)
                last = text.split(separator: "\n").map(String.init).filter(matches).suffix(lines).map { $0 }
            } else if !follow {
                throw AdminConnection.fail("no audit log at \(path) yet")
            }
            for line in last { emit(line) }
            guard follow else { return }
            while !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(250))
                guard let handle = FileHandle(forReadingAtPath: path) else { continue }
                defer { try? handle.close() }
                let size = Int(try handle.seekToEnd())
                if size < offset { (offset, pending) = (0, Data()) }  // rotated: the new file starts over
                guard size > offset else { continue }
                try handle.seek(toOffset: UInt64(offset))
                pending += try handle.read(upToCount: size - offset) ?? Data()
                offset = size
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    if matches(line) { emit(line) }
                }
            }
        }

        /// Unbuffered, so that `--follow` through a pipe shows each event at once.
        private func emit(_ line: String) {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }

        private func matches(_ line: String) -> Bool {
            guard user != nil || event != nil else { return true }
            guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return false }
            if let event, entry["event"] as? String != event { return false }
            guard let user else { return true }
            let wanted = user.lowercased()
            return (entry["user_id"] as? String)?.lowercased() == wanted || (entry["account"] as? String)?.lowercased() == wanted
        }
    }
}
