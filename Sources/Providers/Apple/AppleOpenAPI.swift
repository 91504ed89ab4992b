public import AuthKernel

extension AppleProvider {
    /// The Apple provider's operation in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "apple",
            yaml: PackageResources.openapi_yaml)
    ]
}
