public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
import AuthKernelTesting
#endif

/// A real `authd serve` process on 127.0.0.1 and a free port, for end-to-end tests.
public final class ServerProcess: @unchecked Sendable {
    public let process = Process()
    public let folder: String
    public private(set) var baseURL = ""
    private let stdout = Pipe()
    public let stderr = Pipe()

    /// The `authd` binary built beside this test bundle (or `AUTHD_BINARY`).
    public static var binary: String {
        if let path = ProcessInfo.processInfo.environment["AUTHD_BINARY"] { return path }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The test bundle may be a directory (…/authdPackageTests.xctest/…) on some platforms.
        while !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("authd").path), dir.path != "/" {
            dir.deleteLastPathComponent()
        }
        return dir.appendingPathComponent("authd").path
    }

    /// A new empty data folder with an outbox configuration.
    public static func makeFolder(config: String = #"{"mail":{"transport":"outbox"}}"#) throws -> String {
        let folder = NSTemporaryDirectory() + "authd-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(config.utf8).write(to: URL(fileURLWithPath: folder + "/authd.json"))
        return folder
    }

    public init(folder: String, arguments: [String]? = nil) {
        self.folder = folder
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments ?? ["serve", "--data", folder, "--port", "0"]
        process.standardOutput = stdout
        process.standardError = stderr
        var env = ProcessInfo.processInfo.environment
        env["AUTHD_LOG_LEVEL"] = "warning"
        process.environment = env
    }

    /// Starts the server and waits for its "listening on" line.
    public func start() throws {
        try process.run()
        let handle = stdout.fileHandleForReading
        var line = Data()
        let deadline = Date().addingTimeInterval(120)  // generous: a loaded machine starts slowly
        while Date() < deadline {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty { break }  // exited
            if byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "authd listening on ") else {
            throw E2EError("server did not start: \(text) \(errorOutput())")
        }
        baseURL = String(text[range.upperBound...])
    }

    /// Runs to completion (for commands that should fail fast) and returns the exit status.
    public func runToExit() throws -> Int32 {
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    public func errorOutput() -> String {
        String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self)
    }

    public func standardOutput() -> String {
        String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Sends a signal and waits for the exit status.
    public func stop(signal: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// One HTTP request; returns status and JSON object body.
    public func request(_ method: String, _ path: String, json: [String: Any]? = nil, bearer: String? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as! HTTPURLResponse).statusCode, body)
    }

    /// The code in the newest mail, read from its text as a person reads it.
    /// - Throws: ``MailDefect`` for a mail with a placeholder left or a code its HTML lacks.
    public func lastMailedCode() throws -> String {
        let text = try String(contentsOfFile: folder + "/outbox.jsonl", encoding: .utf8)
        guard let mail = text.split(separator: "\n").last.flatMap(SentMail.init(outboxLine:)) else { throw E2EError("no mail in the outbox") }
        try mail.check()
        guard let code = mail.code else { throw E2EError("no code in the newest mail: \(mail.text)") }
        return code
    }
}

public struct E2EError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
