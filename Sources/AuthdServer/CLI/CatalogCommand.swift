import AuthdCore
import ArgumentParser
import AuthKernel
import Foundation

/// `authd catalog`: every sentence of this build's pages and mail as one gettext PO file, the start
/// of an operator's own language in `DATA/locales/`.
struct CatalogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Print every page and mail sentence of this build as a gettext PO file, for a translation in DATA/locales/.",
        discussion: """
            Each entry's msgctxt is its key and msgid its English text; msgstr holds the language's
            shipped translation, or nothing. Translate the empty ones (Poedit, Weblate, Lokalize) and
            save the file as DATA/locales/LANGUAGE.po; authd reads it at start-up.

            Examples:
              authd catalog --language fr > data/locales/fr.po
              authd catalog --language de > de.po     # the shipped German, to reword some of it
            """
    )

    @Option(help: "The language (a BCP 47 tag: fr, pt-BR). Default: en.")
    var language = "en"

    func run() throws {
        guard let tag = LanguageTag(language) else { throw ValidationError("\"\(language)\" is not a BCP 47 language tag (fr, pt-BR)") }
        let messages = Messages(folder: nil)
        try messages.register(ServerCatalogs.declarations, owner: "authd", prefix: nil)
        for type in Authd.providers.types { try messages.register(type.messageCatalogs, owner: type.id, prefix: type.id + ".") }
        FileHandle.standardOutput.write(Data(messages.po(language: tag.description).utf8))
    }
}
