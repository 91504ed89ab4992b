public import Hummingbird
public import ServiceLifecycle

/// A sign-in method. authd's own (email, apple, pin, password) and third-party ones are all this.
///
/// A provider is created once at start-up when its ``id`` is listed in the configuration's
/// `providers`. It reads its own configuration section, gets the kernel's public services, and
/// returns routes that the registry mounts under `/api/v1/auth`.
///
/// ```swift
/// struct MagicProvider: AuthProvider {
///     static let id = "magic"
///     let kernel: Kernel
///     init(kernel: Kernel, config: inout ConfigSection) throws { self.kernel = kernel }
///     func routes() -> RouteCollection<AuthRequestContext> {
///         let routes = RouteCollection(context: AuthRequestContext.self)
///         routes.post("magic/sign-in") { request, context in ... }
///         return routes
///     }
/// }
/// ```
public protocol AuthProvider: Sendable {
    /// The id used in `providers`, in `auth_providers` and in the `amr` claim; also the name of its configuration section.
    static var id: String { get }

    /// How a person would name this way of signing in, in mail ("a PIN", "Sign in with Apple");
    /// defaults to ``id``.
    static var methodName: String { get }

    /// The name of its configuration section (default ``id``; the `passkey` provider reads `passkeys`).
    static var configSection: String { get }
    /// Whether the provider starts when the configuration does not list `providers` (default true;
    /// false for one that cannot run without settings, like `apple` without its audiences).
    static var startsByDefault: Bool { get }

    /// Creates the provider.
    /// - Parameters:
    ///   - kernel: the services a provider may use.
    ///   - config: the provider's configuration section; unknown keys are rejected after this returns.
    /// - Throws: ``ConfigError`` naming a bad key.
    init(kernel: Kernel, config: inout ConfigSection) throws

    /// The provider's routes, relative to `/api/v1/auth`.
    func routes() -> RouteCollection<AuthRequestContext>
    /// Routes at the server's root, for files other parties look for there (e.g.
    /// `/.well-known/apple-app-site-association`); default none.
    func rootRoutes() -> RouteCollection<AuthRequestContext>

    /// Background work the provider needs (key refresh, queues); run alongside the server.
    var services: [any Service] { get }

    /// The provider's operations and components for `GET /openapi.yaml` (default none).
    static var openAPI: [OpenAPIFragment] { get }

    /// The keys of its configuration section: the only ones ``init(kernel:config:)`` may read (a
    /// read of another stops start-up), listed by `authd check` and in docs/configuration.md.
    static var settings: [Setting] { get }
    /// The audit events it records beyond the kernel's (``AuditEventDeclaration/kernel``).
    static var auditEvents: [AuditEventDeclaration] { get }
    /// The mail it sends, registered before it is created (names `ID.NAME`).
    static var mailTemplates: [MailTemplateDeclaration] { get }
    /// Its message catalogs (``MessageCatalogDeclaration``): the sentences of its pages and mail,
    /// keys `ID.NAME`, English and each language it is translated into.
    static var messageCatalogs: [MessageCatalogDeclaration] { get }
}

extension AuthProvider {
    /// The provider's id.
    public static var methodName: String { id }

    /// Starts by default.
    public static var startsByDefault: Bool { true }
    /// The section named by the id.
    public static var configSection: String { id }

    /// No background work.
    public var services: [any Service] { [] }
    /// No routes at the root.
    public func rootRoutes() -> RouteCollection<AuthRequestContext> { RouteCollection(context: AuthRequestContext.self) }

    /// Nothing in the OpenAPI document.
    public static var openAPI: [OpenAPIFragment] { [] }

    /// No settings.
    public static var settings: [Setting] { [] }
    /// No events of its own.
    public static var auditEvents: [AuditEventDeclaration] { [] }
    /// No mail.
    public static var mailTemplates: [MailTemplateDeclaration] { [] }
    /// No sentences of its own.
    public static var messageCatalogs: [MessageCatalogDeclaration] { [] }
}
