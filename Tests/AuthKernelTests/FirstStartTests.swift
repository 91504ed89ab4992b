@testable import AuthdCore
import Foundation
import Testing

/// The first-start log's `admins invite` command (contract §18): what works where the server was started.
struct FirstStartTests {
    @Test func theBinaryUnderTheWorkingFolderIsNamedByItsRelativePathAndTheDefaultFolderNeedsNoOption() {
        let command = FirstStart.adminCommand(
            "admins invite EMAIL", dataFolder: "./data", executable: "/src/authd/.build/x86_64-unknown-linux-gnu/debug/authd",
            workingFolder: "/src/authd", environment: ["PATH": "/usr/bin"])
        #expect(command == ".build/x86_64-unknown-linux-gnu/debug/authd admins invite EMAIL")
        // The same folder spelled another way is still the default one.
        #expect(FirstStart.adminCommand("x", dataFolder: "/src/authd/data", executable: "/opt/authd", workingFolder: "/src/authd", environment: [:]) == "/opt/authd x")
    }

    @Test func anotherDataFolderIsNamedAndQuotedWhenItNeedsIt() {
        #expect(
            FirstStart.adminCommand("admins invite EMAIL", dataFolder: "/var/lib/my data", executable: "/opt/authd", workingFolder: "/", environment: [:])
                == "/opt/authd admins invite EMAIL --data '/var/lib/my data'")
        // AUTHD_DATA is the admin commands' default too.
        #expect(FirstStart.adminCommand("x", dataFolder: "/srv/d", executable: "/opt/authd", workingFolder: "/", environment: ["AUTHD_DATA": "/srv/d"]) == "/opt/authd x")
    }

    @Test func theBinaryOnPathIsJustAuthd() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("first-start-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/authd", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
        #expect(FirstStart.adminCommand("x", dataFolder: "./data", executable: folder + "/authd", workingFolder: "/", environment: ["PATH": "/nowhere:" + folder]) == "authd x")
        // Another authd first on PATH is not this one: the path is named.
        #expect(FirstStart.adminCommand("x", dataFolder: "./data", executable: "/opt/authd", workingFolder: "/", environment: ["PATH": folder]) == "/opt/authd x")
    }

    @Test func withoutAPasskeyOrTOTPTheNoticeSaysWhatToEnableFirst() {
        let closed = FirstStart.noOperatorYet(command: "authd admins invite EMAIL", factorProviders: [])
        #expect(closed.contains("\"passkey\"") && closed.contains("\"totp\"") && closed.contains("providers"))
        #expect(FirstStart.noOperatorYet(command: "authd admins invite EMAIL", factorProviders: ["totp"]) == "the console has no operator yet: run `authd admins invite EMAIL` and open the link it prints")
    }
}
