/// A provider's part of the OpenAPI document authd serves at `GET /openapi.yaml`.
///
/// The YAML has up to three top-level keys, each optional: `tags:` (list items at two spaces),
/// `paths:` (paths at two spaces, relative to the server root, so `/api/v1/auth/...`) and
/// `components:` (`schemas:`, `responses:`, `requestBodies:`, `parameters:` at two spaces, names at
/// four). The server appends each part to the kernel's document, so a fragment may reference the
/// kernel's components (`#/components/responses/Session`, `RateLimited`, `InvalidRequest`, ...).
/// A path or component name that is already defined stops the server at start-up.
///
/// Keep the YAML in a file beside the provider's code, embedded in the binary by SwiftPM (so the
/// server stays one file), and name it here:
///
/// ```swift
/// // Package.swift: .target(name: "InviteCodeProvider", …, resources: [.embedInCode("openapi.yaml")])
/// public static let openAPI = [OpenAPIFragment(name: "invite", yaml: PackageResources.openapi_yaml)]
/// ```
///
/// A `$ref` to a component that neither the kernel nor a fragment defines stops the server at
/// start-up. The kernel's components are listed in <doc:OpenAPIComponents>.
public struct OpenAPIFragment: Sendable, Hashable {
    /// Unique among the fragments of a server; a fragment listed by two providers is included once.
    public let name: String
    /// The YAML text.
    public let yaml: String

    /// Creates a fragment.
    public init(name: String, yaml: String) {
        self.name = name
        self.yaml = yaml
    }

    /// Creates a fragment from a YAML file's bytes (`PackageResources.openapi_yaml` for a file
    /// embedded with `.embedInCode("openapi.yaml")`).
    public init(name: String, yaml: [UInt8]) {
        self.init(name: name, yaml: String(decoding: yaml, as: UTF8.self))
    }
}
