import AuthdCore
import ArgumentParser
import AuthKernel
import Foundation

/// `authd settings`: the settings this build's providers declare.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "List the settings each provider of this build declares: key, kind, default, meaning.",
        discussion: """
            `authd check` shows the values in effect. A secret (declared so, or a key
            named *secret*, *password*, *api_key* or *private_key*) is marked `, secret`
            and its default shown as [redacted]. With --markdown, the tables of
            docs/configuration.md's provider part.

            Examples:
              authd settings
              authd settings --markdown
            """
    )

    @Flag(help: "Print Markdown tables, as in docs/configuration.md.") var markdown = false

    func run() throws {
        let types = Authd.providers.types
        FileHandle.standardOutput.write(Data((markdown ? SettingsReference.markdown(types) : SettingsReference.text(types)).utf8))
    }
}
