import AuthdCore
import AuthStorage
import AuthKernel
import Foundation

/// Reads the configuration the way `authd serve` and the admin commands both do: the file, with
/// the `AUTHD_*` variables over it (contract §14).
enum ConfigLoading {
    /// The process's `AUTHD_*` variables as configuration; one for the process, so a reload
    /// (SIGHUP) reads them as start-up did.
    static func environment(_ variables: [String: String] = ProcessInfo.processInfo.environment) throws -> ConfigEnvironment {
        let declared = Authd.providers.types.flatMap { type in type.settings.map { "\(type.configSection).\($0.key)" } }
        return try ConfigEnvironment(variables, fileKeys: AuthConfig.fileKeys.union(declared.filter { $0.hasSuffix("_file") }))
    }

    /// Like ``load(path:dataFolder:host:port:environment:)``, with the values in effect as JSON (the
    /// file's, with what the variables set in place), which a reload compares.
    static func loadWithRoot(path: String?, dataFolder: String, host: String, port: Int, environment: ConfigEnvironment) throws -> (AuthConfig, [String: JSONValue]) {
        let config = try load(path: path, dataFolder: dataFolder, host: host, port: port, environment: environment)
        let file = path ?? dataFolder + "/authd.json"
        var root: [String: JSONValue] = [:]
        if let data = FileManager.default.contents(atPath: file), case .object(let o)? = try? JSONDecoder().decode(JSONValue.self, from: data) { root = o }
        return (config, environment.applied(to: root))
    }

    /// `path`, or DATA/authd.json when it exists, or the defaults; the variables over either.
    static func load(path: String?, dataFolder: String, host: String = "127.0.0.1", port: Int = 8080, environment: ConfigEnvironment? = nil) throws -> AuthConfig {
        let environment = try environment ?? Self.environment()
        let file = path ?? dataFolder + "/authd.json"
        let contents = FileManager.default.contents(atPath: file)
        if contents == nil, path != nil { throw ConfigError("cannot read the configuration file \(file)") }
        do {
            return try AuthConfig.parse(
                contents ?? Data("{}".utf8), host: host, port: port, availableProviders: Authd.providers.ids,
                defaultProviders: Authd.providers.defaultIDs, sectionNames: Authd.providers.sectionNames, environment: environment)
        } catch let error as ConfigError where contents != nil && !error.message.contains("AUTHD_") {
            throw ConfigError("\(file): \(error.message)")
        }
    }
}
