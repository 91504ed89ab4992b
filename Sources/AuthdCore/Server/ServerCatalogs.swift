package import AuthKernel

/// The server's message catalogs: its pages and mail, and the operator's console.
package enum ServerCatalogs {
    package static let declarations = [
        MessageCatalogDeclaration("en", PackageResources.en_po), MessageCatalogDeclaration("de", PackageResources.de_po),
        MessageCatalogDeclaration("en", PackageResources.console_en_po), MessageCatalogDeclaration("de", PackageResources.console_de_po),
    ]
}
