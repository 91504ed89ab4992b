public import AuthKernel

extension PasskeyProvider {
    /// The passkey provider's operations in `GET /openapi.yaml`. WebAuthn's own JSON (options,
    /// credentials) is described loosely: its specification defines it, camelCase.
    public static let openAPI = [
        OpenAPIFragment(
            name: "passkey",
            yaml: PackageResources.openapi_yaml
        )
    ]
}
