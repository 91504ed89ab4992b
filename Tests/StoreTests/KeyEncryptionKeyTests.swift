import AuthKernel
import Foundation
import PostgresStore
import Testing

struct KeyEncryptionKeyTests {
    let settings = AuthConfig.PostgresSettings(url: "postgres://authd@localhost/authd")

    @Test func comesFromTheEnvironmentOrAFileAndMustBe32Bytes() throws {
        let hex = String(repeating: "ab", count: 32)
        #expect(try KeyEncryptionKey.load(settings, environment: ["AUTHD_KEY_ENCRYPTION_KEY": hex]) == [UInt8](repeating: 0xab, count: 32))
        let path = NSTemporaryDirectory() + "kek-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: path, contents: Data((String(repeating: "01", count: 32) + "\n").utf8))
        var fromFile = settings
        fromFile.keyEncryptionKeyFile = path
        // The file wins over the environment.
        #expect(try KeyEncryptionKey.load(fromFile, environment: ["AUTHD_KEY_ENCRYPTION_KEY": hex]) == [UInt8](repeating: 1, count: 32))
        #expect(throws: PostgresStoreError.self) { try KeyEncryptionKey.load(settings, environment: [:]) }
        #expect(throws: PostgresStoreError.self) { try KeyEncryptionKey.load(settings, environment: ["AUTHD_KEY_ENCRYPTION_KEY": "abcd"]) }
        #expect(throws: PostgresStoreError.self) { try KeyEncryptionKey.load(settings, environment: ["AUTHD_KEY_ENCRYPTION_KEY": String(repeating: "zz", count: 32)]) }
        fromFile.keyEncryptionKeyFile = "/nonexistent/kek"
        #expect(throws: PostgresStoreError.self) { try KeyEncryptionKey.load(fromFile, environment: [:]) }
    }
}
