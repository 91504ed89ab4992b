import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerProcessSupport
import Testing

/// `authd serve` as a real process over real sockets.
@Suite(.serialized)
struct ServeEndToEndTests {
    func signIn(_ server: ServerProcess, email: String) async throws -> [String: Any] {
        let (sent, _) = try await server.request("POST", "/api/v1/auth/email/send-code", json: ["email": email])
        #expect(sent == 200)
        let (status, session) = try await server.request("POST", "/api/v1/auth/email/verify", json: ["email": email, "code": try server.lastMailedCode(), "device_name": "e2e"])
        #expect(status == 200)
        return session
    }

    @Test func signInByEmailRefreshLogoutRestart() async throws {
        let folder = try ServerProcess.makeFolder()
        let server = ServerProcess(folder: folder)
        try server.start()
        let session = try await signIn(server, email: "e2e@example.com")
        let access = try #require(session["access_token"] as? String)
        let refresh = try #require(session["refresh_token"] as? String)
        let userID = try #require((session["user"] as? [String: Any])?["id"] as? String)

        let (meStatus, me) = try await server.request("GET", "/api/v1/auth/me", bearer: access)
        #expect(meStatus == 200 && me["email"] as? String == "e2e@example.com")

        let (refreshStatus, rotated) = try await server.request("POST", "/api/v1/auth/refresh", json: ["refresh_token": refresh])
        #expect(refreshStatus == 200)
        let newAccess = try #require(rotated["access_token"] as? String)
        let newRefresh = try #require(rotated["refresh_token"] as? String)
        #expect(newRefresh != refresh)

        let (logoutStatus, _) = try await server.request("POST", "/api/v1/auth/logout", bearer: newAccess)
        #expect(logoutStatus == 204)
        #expect(try await server.request("GET", "/api/v1/auth/me", bearer: newAccess).0 == 401)

        #expect(server.stop(signal: SIGTERM) == 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/snapshot.json"))

        let restarted = ServerProcess(folder: folder)
        try restarted.start()
        #expect(try await restarted.request("POST", "/api/v1/auth/refresh", json: ["refresh_token": newRefresh]).0 == 401)
        let again = try await signIn(restarted, email: "e2e@example.com")
        #expect((again["user"] as? [String: Any])?["id"] as? String == userID)
        #expect(restarted.stop(signal: SIGINT) == 0)
    }

    @Test func anonymousThenPINAndUsernameThenASecondDevice() async throws {
        let server = ServerProcess(folder: try ServerProcess.makeFolder())
        try server.start()
        let (status, first) = try await server.request("POST", "/api/v1/auth/anonymous", json: ["device_name": "phone"])
        #expect(status == 200)
        let access = try #require(first["access_token"] as? String)
        #expect((first["user"] as? [String: Any])?["is_anonymous"] as? Bool == true)
        #expect(try await server.request("PUT", "/api/v1/auth/pin", json: ["pin": "4711"], bearer: access).0 == 204)
        #expect(try await server.request("PUT", "/api/v1/auth/username", json: ["username": "otto"], bearer: access).0 == 200)

        let (signedIn, second) = try await server.request("POST", "/api/v1/auth/pin/verify", json: ["username": "otto", "pin": "4711", "device_name": "tablet"])
        #expect(signedIn == 200)
        #expect((second["user"] as? [String: Any])?["id"] as? String == (first["user"] as? [String: Any])?["id"] as? String)
        let (_, list) = try await server.request("GET", "/api/v1/auth/sessions", bearer: try #require(second["access_token"] as? String))
        let devices = (list["sessions"] as? [[String: Any]])?.compactMap { $0["device_name"] as? String }.sorted()
        #expect(devices == ["phone", "tablet"])
        #expect(server.stop() == 0)
    }

    @Test func passwordRegistrationLoginAndADeviceApprovedReset() async throws {
        let server = ServerProcess(folder: try ServerProcess.makeFolder())
        try server.start()
        let email = "pw@example.com", password = "first good secret", newPassword = "second good secret"
        #expect(try await server.request("POST", "/api/v1/auth/password/register", json: ["email": email, "password": password]).0 == 202)
        let (verified, _) = try await server.request("POST", "/api/v1/auth/password/verify-email", json: ["email": email, "code": try server.lastMailedCode(), "password": password])
        #expect(verified == 200)
        let (loggedIn, first) = try await server.request("POST", "/api/v1/auth/password/login", json: ["email": email, "password": password, "device_name": "phone"])
        #expect(loggedIn == 200)
        let access = try #require(first["access_token"] as? String)
        let refresh = try #require(first["refresh_token"] as? String)

        let (initiated, reset) = try await server.request("POST", "/api/v1/auth/password/reset/device/initiate", json: ["email": email, "new_password": newPassword, "device_name": "laptop"])
        #expect(initiated == 202)
        let id = try #require(reset["request_id"] as? String)
        let (_, pending) = try await server.request("GET", "/api/v1/auth/approvals", bearer: access)
        #expect((pending["approvals"] as? [[String: Any]])?.first?["id"] as? String == id)
        #expect(try await server.request("POST", "/api/v1/auth/approvals/\(id)/approve", json: ["match_code": try #require(reset["match_code"] as? String)], bearer: access).0 == 204)
        #expect(try await server.request("GET", "/api/v1/auth/password/reset/device/\(id)").1["status"] as? String == "approved")
        #expect(try await server.request("POST", "/api/v1/auth/password/reset/device/\(id)/complete").0 == 200)

        #expect(try await server.request("POST", "/api/v1/auth/refresh", json: ["refresh_token": refresh]).0 == 401)
        #expect(try await server.request("POST", "/api/v1/auth/password/login", json: ["email": email, "password": password]).0 == 401)
        #expect(try await server.request("POST", "/api/v1/auth/password/login", json: ["email": email, "password": newPassword]).0 == 200)
        #expect(server.stop() == 0)
    }

    @Test func acknowledgedWritesSurviveSIGKILL() async throws {
        let folder = try ServerProcess.makeFolder()
        let server = ServerProcess(folder: folder)
        try server.start()
        let session = try await signIn(server, email: "crash@example.com")
        let refresh = try #require(session["refresh_token"] as? String)
        _ = server.stop(signal: SIGKILL)

        let restarted = ServerProcess(folder: folder)
        try restarted.start()
        let (status, rotated) = try await restarted.request("POST", "/api/v1/auth/refresh", json: ["refresh_token": refresh])
        #expect(status == 200)
        #expect((rotated["user"] as? [String: Any])?["email"] as? String == "crash@example.com")
        #expect(restarted.stop() == 0)
    }

    @Test func aSecondServerOnTheSameFolderRefusesToStart() async throws {
        let folder = try ServerProcess.makeFolder()
        let first = ServerProcess(folder: folder)
        try first.start()
        let second = ServerProcess(folder: folder)
        #expect(try second.runToExit() != 0)
        #expect(second.errorOutput().contains("in use by another authd process"))
        #expect(try await first.request("GET", "/health").0 == 200)
        #expect(first.stop() == 0)
    }

    @Test func aHalfSentRequestDoesNotHoldItsConnection() throws {
        let server = ServerProcess(folder: try ServerProcess.makeFolder(config: #"{"http":{"idle_timeout":1}}"#))
        try server.start()
        defer { _ = server.stop() }
        let port = UInt16(server.baseURL.split(separator: ":").last!)!
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        #expect(connected == 0)
        let partial = Array("GET /health HTTP/1.1\r\nHost: x\r\n".utf8)
        _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        // Only so that a server that never closes fails the test instead of hanging it: generous.
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = recv(fd, &buffer, buffer.count, 0)
        // 0 is the server closing the connection; our own receive timeout would give -1.
        #expect(n == 0, "the server should close the connection")
    }

    @Test func aBadConfigurationNamesTheKey() throws {
        let folder = try ServerProcess.makeFolder(config: #"{"tokens":{"acess_ttl":5}}"#)
        let server = ServerProcess(folder: folder)
        #expect(try server.runToExit() == 1)
        #expect(server.errorOutput().contains("unknown configuration key tokens.acess_ttl"))
    }

    @Test func versionAndEnvironment() async throws {
        let version = ServerProcess(folder: "", arguments: ["--version"])
        #expect(try version.runToExit() == 0)
        #expect(version.standardOutput().trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)

        // Environment variables configure serve; flags would win.
        let folder = try ServerProcess.makeFolder()
        let server = ServerProcess(folder: "", arguments: ["serve"])
        var env = server.process.environment ?? [:]
        env["AUTHD_DATA"] = folder
        env["AUTHD_PORT"] = "0"
        server.process.environment = env
        try server.start()
        #expect(try await server.request("GET", "/health").1["status"] as? String == "ok")
        #expect(FileManager.default.fileExists(atPath: folder + "/keys"))
        #expect(server.stop() == 0)
    }

    @Test func theReadyLineComesOnceEveryListenerAcceptsConnections() async throws {
        let port = try Self.freePort()
        let folder = try ServerProcess.makeFolder(config: #"{"mail":{"transport":"outbox"},"metrics":{"listen":"127.0.0.1:\#(port)"}}"#)
        let server = ServerProcess(folder: folder)
        try server.start()
        // No retry: whoever waited for the line may use every listener at once.
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self).contains("authd_"))
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/admin.sock")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(server.stop() == 0)
    }

    /// A TCP port nothing listens on now (bound to port 0, then closed).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw E2EError("no free port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
