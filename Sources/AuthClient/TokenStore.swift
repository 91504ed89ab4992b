import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the tokens live between launches.
public protocol TokenStore: Sendable {
    /// The saved tokens, if any.
    func load() async throws -> AuthTokens?
    /// Saves tokens, replacing any.
    func save(_ tokens: AuthTokens) async throws
    /// Forgets the tokens (sign-out).
    func clear() async throws
}

/// Tokens in memory only: gone when the process ends.
public actor InMemoryTokenStore: TokenStore {
    private var tokens: AuthTokens?
    /// Creates an empty store.
    public init(_ tokens: AuthTokens? = nil) { self.tokens = tokens }
    public func load() -> AuthTokens? { tokens }
    public func save(_ tokens: AuthTokens) { self.tokens = tokens }
    public func clear() { tokens = nil }
}

/// Tokens in a JSON file readable only by the owner (mode 0600), for daemons on Linux devices.
/// Writes go to a temporary file that is renamed over the old one.
public actor FileTokenStore: TokenStore {
    /// The file.
    public let path: String

    /// Creates a store at `path` (its folder must exist).
    public init(path: String) { self.path = path }

    public func load() throws -> AuthTokens? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(AuthTokens.self, from: data)
    }

    public func save(_ tokens: AuthTokens) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let data = try encoder.encode(tokens)
        let tmp = path + ".tmp"
        guard FileManager.default.createFile(atPath: tmp, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tmp)
        // rename(2) replaces the old file in one step: a reader sees the old tokens or the new ones.
        guard rename(tmp, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
    }
}

#if canImport(Security)
import Security

/// Tokens in the Keychain, readable after the first unlock and never leaving this device
/// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
public struct KeychainTokenStore: TokenStore {
    /// Keychain service name.
    public let service: String
    /// Keychain account name.
    public let account: String

    /// Creates a store for an item identified by service and account.
    public init(service: String = "authd", account: String = "tokens") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load() throws -> AuthTokens? {
        var q = query
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(q as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
        return try JSONDecoder().decode(AuthTokens.self, from: data)
    }

    public func save(_ tokens: AuthTokens) throws {
        let data = try JSONEncoder().encode(tokens)
        let update: [String: Any] = [kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
        var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var add = query
            add.merge(update) { $1 }
            status = SecItemAdd(add as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
    }

    public func clear() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
    }
}
#endif
