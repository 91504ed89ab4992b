import Foundation

/// What a fresh install logs so its operator can get in (contract §18): which providers and mail
/// transport are on, and an `admins invite` command that works from where the server was started.
package enum FirstStart {
    /// The `authd` command as the person who started this server can type it: `authd` when that
    /// name on `PATH` is this binary, else the binary's path (relative to the working folder when
    /// under it, as `make serve`'s `.build/…/debug/authd` is), with `--data` when the folder is not
    /// the default one.
    package static func adminCommand(
        _ arguments: String, dataFolder: String, executable: String? = Self.executablePath(),
        workingFolder: String = FileManager.default.currentDirectoryPath,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        var command = "authd"
        if let executable, !onPath("authd", is: executable, environment: environment) {
            let folder = workingFolder.hasSuffix("/") ? workingFolder : workingFolder + "/"
            command = folder != "/" && executable.hasPrefix(folder) ? String(executable.dropFirst(folder.count)) : executable
            if !command.contains("/") { command = "./" + command }
        }
        let defaultFolder = environment["AUTHD_DATA"] ?? "./data"
        let sameFolder = normalized(dataFolder, in: workingFolder) == normalized(defaultFolder, in: workingFolder)
        return command + " " + arguments + (sameFolder ? "" : " --data " + quoted(dataFolder))
    }

    /// The first-start notice's message: the console's address is in its metadata.
    package static func noOperatorYet(command: String, factorProviders: [String]) -> String {
        if factorProviders.isEmpty {
            return "the console has no operator yet, and an operator signs in with a passkey or an authenticator app: "
                + "add \"passkey\" (with passkeys.rp_id) or \"totp\" to providers, restart, then run `\(command)` and open the link it prints"
        }
        return "the console has no operator yet: run `\(command)` and open the link it prints"
    }

    /// This process's binary, from `/proc/self/exe`.
    package static func executablePath() -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    }

    static func onPath(_ name: String, is executable: String, environment: [String: String]) -> Bool {
        for folder in (environment["PATH"] ?? "").split(separator: ":") where !folder.isEmpty {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name).resolvingSymlinksInPath().path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate == URL(fileURLWithPath: executable).resolvingSymlinksInPath().path }
        }
        return false
    }

    static func normalized(_ path: String, in folder: String) -> String {
        let absolute = path.hasPrefix("/") ? path : folder + "/" + path
        return URL(fileURLWithPath: absolute).standardizedFileURL.path
    }

    static func quoted(_ path: String) -> String {
        path.allSatisfy({ $0.isLetter || $0.isNumber || "/._-".contains($0) }) ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
