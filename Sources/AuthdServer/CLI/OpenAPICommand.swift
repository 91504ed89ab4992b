import AuthdCore
import ArgumentParser
import AuthKernel
import Foundation

/// `authd openapi`: the OpenAPI document a server with the given providers serves.
struct OpenAPICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "Print the OpenAPI document a server with these providers serves at /openapi.yaml.",
        discussion: """
            Examples:
              authd openapi > docs/openapi.yaml      # every provider this build has
              authd openapi --providers email,pin
            """
    )

    @Option(help: "Comma-separated provider ids. Default: every provider this build has.")
    var providers: String?

    func run() throws {
        let registry = Authd.providers
        let ids = providers.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? registry.ids
        if let unknown = ids.first(where: { !registry.ids.contains($0) }) {
            throw ValidationError("this build has no provider \"\(unknown)\" (it has \(registry.ids.joined(separator: ", ")))")
        }
        let document = try OpenAPIDocument.assemble(providers: registry.types(started: ids))
        FileHandle.standardOutput.write(Data(document.utf8))
    }
}
