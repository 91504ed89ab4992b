import AuthKernel
import Foundation

/// Reads the configuration file the way `authd serve` and the admin commands both do.
enum ConfigLoading {
    /// `path`, or DATA/authd.json when it exists, or the defaults.
    static func load(path: String?, dataFolder: String, host: String = "127.0.0.1", port: Int = 8080) throws -> AuthConfig {
        let file = path ?? dataFolder + "/authd.json"
        if let data = FileManager.default.contents(atPath: file) {
            do {
                return try AuthConfig.parse(data, host: host, port: port, availableProviders: availableProviders.ids, defaultProviders: availableProviders.defaultIDs)
            } catch let error as ConfigError {
                throw ConfigError("\(file): \(error.message)")
            }
        }
        if path != nil { throw ConfigError("cannot read the configuration file \(file)") }
        return AuthConfig.defaults(host: host, port: port, availableProviders: availableProviders.ids, defaultProviders: availableProviders.defaultIDs)
    }
}
