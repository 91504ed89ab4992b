/// A provider's part of the OpenAPI document authd serves at `GET /openapi.yaml`.
///
/// The YAML has up to three top-level keys, each optional: `tags:` (list items at two spaces),
/// `paths:` (paths at two spaces, relative to the server root, so `/api/v1/auth/...`) and
/// `components:` (`schemas:`, `responses:`, `requestBodies:`, `parameters:` at two spaces, names at
/// four). The server appends each part to the kernel's document, so a fragment may reference the
/// kernel's components (`#/components/responses/Session`, `RateLimited`, `InvalidRequest`, ...).
/// A path or component name that is already defined stops the server at start-up.
///
/// ```swift
/// static let openAPI = [OpenAPIFragment(name: "invite", yaml: """
///     tags:
///       - { name: invite, description: Sign in with an invitation code }
///     paths:
///       /api/v1/auth/invite/redeem:
///         post:
///           operationId: redeemInvite
///           ...
///     """)]
/// ```
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
}
