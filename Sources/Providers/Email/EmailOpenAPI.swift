public import AuthKernel

extension EmailProvider {
    /// The email provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "email",
            yaml: PackageResources.openapi_yaml)
    ]
}
