import AuthdCore
import AuthStorage
import AuthKernel
import Foundation

/// Reads the configuration file the way `authd serve` and the admin commands both do.
enum ConfigLoading {
    /// Like ``load(path:dataFolder:host:port:)``, with the file's JSON (empty without a file).
    static func loadWithRoot(path: String?, dataFolder: String, host: String, port: Int) throws -> (AuthConfig, [String: JSONValue]) {
        let config = try load(path: path, dataFolder: dataFolder, host: host, port: port)
        let file = path ?? dataFolder + "/authd.json"
        guard let data = FileManager.default.contents(atPath: file) else { return (config, [:]) }
        guard case .object(let root)? = try? JSONDecoder().decode(JSONValue.self, from: data) else { return (config, [:]) }
        return (config, root)
    }

    /// `path`, or DATA/authd.json when it exists, or the defaults.
    static func load(path: String?, dataFolder: String, host: String = "127.0.0.1", port: Int = 8080) throws -> AuthConfig {
        let file = path ?? dataFolder + "/authd.json"
        if let data = FileManager.default.contents(atPath: file) {
            do {
                return try AuthConfig.parse(data, host: host, port: port, availableProviders: Authd.providers.ids, defaultProviders: Authd.providers.defaultIDs, sectionNames: Authd.providers.sectionNames)
            } catch let error as ConfigError {
                throw ConfigError("\(file): \(error.message)")
            }
        }
        if path != nil { throw ConfigError("cannot read the configuration file \(file)") }
        return AuthConfig.defaults(host: host, port: port, availableProviders: Authd.providers.ids, defaultProviders: Authd.providers.defaultIDs)
    }
}
