import AuthStorage
import AuthKernel
import AuthKernelTesting
import Foundation
import Logging
import Testing

struct KeyFolderTests {
    let logger = Logger(label: "test")

    func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777
    }

    @Test func signingKeyIsCreatedOnceWithTightModesAndReloaded() throws {
        let data = temporaryFolder()
        let folder = try KeyFolder(dataFolder: data)
        let first = try folder.loadOrCreateSigningKeys(now: Date(), logger: logger)
        #expect(first.count == 1)
        #expect(try mode(data + "/keys") == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: data + "/keys")
        #expect(files == ["signing-\(first[0].kid).json"])
        #expect(try mode(data + "/keys/" + files[0]) == 0o600)

        let again = try KeyFolder(dataFolder: data).loadOrCreateSigningKeys(now: Date(), logger: logger)
        #expect(again.map(\.kid) == first.map(\.kid))
        #expect(again[0].keyPair.publicKey == first[0].keyPair.publicKey)
        #expect(first[0].kid == SigningKey.thumbprint(publicKey: first[0].keyPair.publicKey))
    }

    @Test func secretsAreStableAndPrivate() throws {
        let data = temporaryFolder()
        let logs = LogCapture()
        let folder = try KeyFolder(dataFolder: data)
        let secret = try folder.loadOrCreateSecret(named: "code-secret", logger: logs.logger())
        #expect(secret.count == 32)
        #expect(try folder.loadOrCreateSecret(named: "code-secret", logger: logger) == secret)
        let path = data + "/keys/code-secret.key"
        #expect(try mode(path) == 0o600)
        // A key file someone loosened is tightened again, with a warning.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        _ = try folder.loadOrCreateSecret(named: "code-secret", logger: logs.logger())
        #expect(try mode(path) == 0o600)
        #expect(logs.contains("setting mode 0600"))
        #expect(!logs.contains(Hex.encode(secret)))
    }

    @Test func aDamagedKeyFileStopsStartUp() throws {
        let data = temporaryFolder()
        let folder = try KeyFolder(dataFolder: data)
        let key = try folder.loadOrCreateSigningKeys(now: Date(), logger: logger)[0]
        try Data("{}".utf8).write(to: URL(fileURLWithPath: data + "/keys/signing-\(key.kid).json"))
        #expect(throws: ConfigError.self) { try folder.loadOrCreateSigningKeys(now: Date(), logger: logger) }
    }
}
