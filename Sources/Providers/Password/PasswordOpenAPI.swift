public import AuthKernel

extension PasswordProvider {
    /// The password provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "password",
            yaml: PackageResources.openapi_yaml)
    ]
}
