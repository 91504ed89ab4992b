/// A Mustache template a provider's page steps render, declared like its mail: named `ID.NAME`,
/// kept as a file beside its code and embedded in the binary.
///
/// Values are HTML-escaped when rendered (`{{email}}`); the server gives every template `csrf`
/// (the form's hidden field) and `action` (where the provider's forms post, `/login/ID/`).
public struct PageTemplateDeclaration: Sendable {
    /// `PROVIDER.NAME`.
    public var name: String
    /// The Mustache source.
    public var source: String

    /// A template from its source.
    public init(_ name: String, _ source: String) {
        self.name = name
        self.source = source
    }

    /// A template from an embedded file's bytes (`PackageResources.login_mustache`).
    public init(_ name: String, _ bytes: [UInt8]) {
        self.init(name, String(decoding: bytes, as: UTF8.self))
    }
}
