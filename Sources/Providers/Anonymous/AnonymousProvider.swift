public import AuthKernel
public import Hummingbird
public import ServiceLifecycle

/// Anonymous sign-in and user names (contract §4 "pin", which brings them along).
///
/// - `POST /api/v1/auth/anonymous`: a session for a new anonymous user.
/// - `PUT /api/v1/auth/username` (Bearer): choose a user name.
///
/// Listed in `providers` on its own, it offers anonymous accounts without PINs (settings in the
/// `anonymous` section). A configuration that lists `pin` gets it too, set by the `pin` section,
/// as before this was a provider of its own.
public struct AnonymousProvider: AuthProvider {
    /// `anonymous`: its name in `providers`, its configuration section, `auth_providers` and `amr`.
    public static let id = "anonymous"
    /// How the notice of a newly added sign-in method names it.
    public static let methodName = "anonymous sign-in"
    /// The default `providers` get it through `pin`.
    public static let startsByDefault = false

    let kernel: Kernel
    let settings: AnonymousSettings

    /// Reads its configuration section and registers its mail and hooks with the kernel.
    public init(kernel: Kernel, config: inout ConfigSection) throws {
        self.init(kernel: kernel, settings: try AnonymousSettings(&config))
    }

    /// Creates it with settings read elsewhere (by a provider that brings it along).
    public init(kernel: Kernel, settings: AnonymousSettings) {
        self.kernel = kernel
        self.settings = settings
    }

    struct DeviceBody: Decodable {
        var deviceName: String?
        var platform: String?
        enum CodingKeys: String, CodingKey { case deviceName = "device_name", platform }
    }
    struct UsernameBody: Decodable { var username: String }

    /// Its routes, under `/api/v1/auth`.
    public func routes() -> RouteCollection<AuthRequestContext> {
        let routes = RouteCollection(context: AuthRequestContext.self)
        let kernel = self.kernel, settings = self.settings

        routes.post("anonymous") { request, context -> SignInResponse in
            let body = try await request.decodeJSONIfPresent(as: DeviceBody.self, context: context)
            let device = try DeviceInfo(name: body?.deviceName, platform: body?.platform)
            try await kernel.rateLimiter.consume(settings.signUpsPerIP, key: "anonymous.ip:\(context.clientKey)")
            let user = try await kernel.users.createAnonymous()
            return try await kernel.sessions.signIn(user, amr: [Self.id], device: device)
        }

        routes.put("username") { request, context -> UserResponse in
            let principal = try context.requirePrincipal()
            let body = try await request.decodeJSON(as: UsernameBody.self, context: context)
            guard Username.isValid(body.username) else {
                throw AuthError.invalidRequest(
                    "A user name is 3 to 32 characters: letters, digits, `_`, `.` and `-`.", field: "username"
                )
            }
            let user = try await kernel.users.update(principal.user.id) { $0.username = body.username }
            return UserResponse(user)
        }
        return routes
    }

    /// Deletes idle anonymous users.
    public var services: [any Service] { [AnonymousUserPurge(kernel: kernel, ttl: settings.ttl)] }
}

// It holds its settings and keys: a log line or a `dump` shows its name only (contract §17).
extension AnonymousProvider: RedactedDescription {}
