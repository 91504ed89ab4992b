public import AuthKernel

extension TOTPProvider {
    /// The TOTP provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "totp",
            yaml: PackageResources.openapi_yaml
        )
    ]
}
