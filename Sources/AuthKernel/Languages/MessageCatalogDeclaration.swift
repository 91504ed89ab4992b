/// A message catalog a provider ships: one language's gettext PO file, whose keys (each entry's
/// `msgctxt`) start with the provider's id and a dot. English is the one every key must have; a
/// key another language lacks is shown in English.
///
/// ```swift
/// public static let messageCatalogs = [MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po)]
/// ```
public struct MessageCatalogDeclaration: Sendable {
    /// The language (a BCP 47 tag: `de`, `pt-BR`).
    public var language: String
    /// The PO file's text.
    public var source: String

    /// A catalog from its PO file's bytes (a resource embedded in code).
    public init(_ language: String, _ bytes: [UInt8]) {
        self.language = language
        self.source = String(decoding: bytes, as: UTF8.self)
    }

    /// A catalog from its PO file's text.
    public init(_ language: String, source: String) {
        self.language = language
        self.source = source
    }
}
